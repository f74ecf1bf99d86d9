// Harbor — test support: running work on a brand-new thread, its loop torn down after.
import HarborPorts
import HarborSystem

/// Runs `body` on a brand-new thread and returns its result after the thread
/// has exited (so its Harbor loop, if it made one, is already torn down).
public func onFreshThread<T>(_ body: @escaping () -> T) -> T {
    let box = FreshThreadBox(body)
    SystemThread.start { box.run() }.join()
    return box.result!
}

/// A body and its result, carried to a fresh thread and back.
private final class FreshThreadBox<T>: @unchecked Sendable {
    // @unchecked: the thread runs `body` and writes `result` before it
    // exits; the caller reads `result` only after joining it.
    var body: (() -> T)?
    var result: T?
    init(_ body: @escaping () -> T) { self.body = body }
    func run() {
        result = body?()
        body = nil
    }
}
