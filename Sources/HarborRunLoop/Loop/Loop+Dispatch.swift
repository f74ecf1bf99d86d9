// Harbor — the main loop drains DispatchQueue.main (and so @MainActor work) in its common modes (RL14, A03).
//
// libdispatch on Linux exposes, for CoreFoundation's run loop, the main
// queue's wake-up descriptor (an eventfd it writes whenever work is queued
// on the main queue) and the call that drains the queue. The main loop puts
// that eventfd in the waitset of every common mode it runs and, when it is
// readable, reads it and calls the drain: exactly what CFRunLoop does, so
// `DispatchQueue.main.async` and `@MainActor` code run inside a Harbor
// program as on Darwin, with no second event loop and no extra thread.
import Dispatch
import HarborPorts
import Synchronization
import HarborSystem

/// libdispatch's main-queue eventfd (created by libdispatch on first use).
@_silgen_name("_dispatch_get_main_queue_handle_4CF")
private func dispatchMainQueueHandle() -> CInt

/// Runs the blocks queued on the main queue (on the main thread only).
@_silgen_name("_dispatch_main_queue_callback_4CF")
private func dispatchMainQueueCallback(_ message: UnsafeMutableRawPointer?)

/// Main-thread-only bookkeeping of the drain. Atomics only so the compiler
/// can see it is safe; nothing but the main thread touches it.
private enum MainQueueDrain {
    /// How many drains are running on the main thread's stack. libdispatch
    /// forbids draining the main queue from inside its own drain (a nested
    /// run inside a main-queue block), as CF does.
    static let depth = Atomic<Int>(0)
    /// A wake-up seen while a drain was on the stack: drain again after it.
    static let missed = Atomic<Bool>(false)
    /// The eventfd, fetched once and made non-blocking (libdispatch makes it
    /// so already; this guards a build that would not).
    static let handle: CInt = {
        let fd = dispatchMainQueueHandle()
        DescriptorIO.setNonBlocking(fd)
        return fd
    }()
}

extension Callout {
    @inline(never)
    static func mainQueue() {
        dispatchMainQueueCallback(nil)
    }
}

extension Loop {
    /// Puts the main queue's eventfd in `mode`'s waitset the first time the
    /// main loop runs a common mode (edge-triggered: the loop reads it before
    /// each drain). Called only on the main loop's own thread.
    func watchMainQueue(in mode: ModeState) {
        let needed = state.withLock { _ in mode.isCommon && !mode.watchesMainQueue }
        guard needed else { return }
        do {
            try mode.epoll.add(MainQueueDrain.handle, events: [.readable, .edgeTriggered], token: WaitToken.mainQueue.rawValue)
        } catch {
            preconditionFailure("Harbor: cannot watch the main dispatch queue in mode \(mode.name): \(error)")
        }
        state.withLock { _ in mode.watchesMainQueue = true }
    }

    /// Drains `DispatchQueue.main` after its eventfd became readable; a
    /// wake-up arriving inside a drain (a nested run) is kept for after it.
    /// Returns whether the drain ran (it counts as "handled source", as in CF).
    func doMainQueue() -> Bool {
        guard MainQueueDrain.depth.load(ordering: .relaxed) == 0 else {
            MainQueueDrain.missed.store(true, ordering: .relaxed)
            return false
        }
        repeat {
            MainQueueDrain.missed.store(false, ordering: .relaxed)
            DescriptorIO.drainCounter(MainQueueDrain.handle)
            MainQueueDrain.depth.add(1, ordering: .relaxed)
            Callout.mainQueue()
            MainQueueDrain.depth.subtract(1, ordering: .relaxed)
        } while MainQueueDrain.missed.load(ordering: .relaxed)
        return true
    }

    /// The main loop in a common mode is never empty: the main queue is a
    /// source of work there (CF's `__CFRunLoopModeIsEmpty` says the same),
    /// except inside a main-queue drain, where it cannot be serviced.
    func mainQueueKeepsAlive(_ mode: ModeState) -> Bool {
        isMain && mode.isCommon && MainQueueDrain.depth.load(ordering: .relaxed) == 0
    }
}
