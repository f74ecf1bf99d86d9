// Harbor — call-out trampolines: every user callback goes through one of these
// (a waitset source's kind declares its own beside it, in its file).
//
// Each is `@inline(never)`, so a crash log or a profile names the kind of
// callback that was running (CF's __CFRUNLOOP_IS_CALLING_OUT_TO_…__).
// No lock is ever held when these run.
import HarborPorts

enum Callout {
    @inline(never)
    static func observer(_ observer: LoopObserver, _ activity: LoopActivity) {
        observer.handler(observer, activity)
    }

    @inline(never)
    static func block(_ block: @Sendable () -> Void) {
        block()
    }

    @inline(never)
    static func source(_ source: LoopSource) {
        source.handler(source)
    }

    @inline(never)
    static func timer(_ timer: LoopTimer) {
        timer.handler(timer)
    }
}
