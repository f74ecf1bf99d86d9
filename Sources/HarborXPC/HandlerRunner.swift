// HarborXPC — the one path by which handlers reach their target (XPCHandlerTarget.swift).
import Dispatch
import HarborRunLoop
import HarborSystem

/// One listener's or session's place to run handlers: an ``XPCHandlerTarget``
/// made serial for it (a queue of its own that targets the given one).
struct HandlerRunner: Sendable {
    private enum Place: Sendable {
        case inline
        case queue(DispatchQueue)
        case loop(Loop)
    }

    private let place: Place

    private init(place: Place) { self.place = place }

    /// A runner for `target`; `label` names its serial queue.
    init(_ target: XPCHandlerTarget, label: String) {
        switch target {
        case .ownThread: place = .inline
        case .queue(let queue): place = .queue(DispatchQueue(label: label, target: queue))
        case .loop(let loop): place = .loop(loop)
        }
    }

    /// Runs `body` on the target and returns once it ran; false if it could
    /// not run (the loop's thread ended). Never call it on the target
    /// itself with a queue target (it would wait for itself).
    @discardableResult
    func run(_ body: @escaping @Sendable () -> Void) -> Bool {
        switch place {
        case .inline:
            body()
            return true
        case .queue(let queue):
            queue.sync(execute: body)
            return true
        case .loop(let loop):
            do {
                try loop.performAndWait(body)
                return true
            } catch {
                return false
            }
        }
    }

    /// `body`'s value, computed on the target; nil if it could not run.
    func value<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Value? {
        let result = HarborLock<Value?>(nil)
        guard run({ let value = body(); result.withLock { $0 = value } }) else { return nil }
        return result.withLock { $0 }
    }

    /// Queues `body` on the target without waiting (the caller may be on
    /// the target, as a handler cancelling its own session is); inline for
    /// ``XPCHandlerTarget/ownThread``.
    func post(_ body: @escaping @Sendable () -> Void) {
        switch place {
        case .inline: body()
        case .queue(let queue): queue.async(execute: body)
        case .loop(let loop): loop.perform(body)
        }
    }

    /// This runner for a subscription's event handler: itself, or, for
    /// ``XPCHandlerTarget/ownThread``, a serial queue of the subscription's
    /// own (named `label`) on Dispatch's pool, so the handler never runs on
    /// the thread that receives every subscription's events.
    func elsewhere(label: String) -> HandlerRunner {
        guard case .inline = place else { return self }
        return HandlerRunner(place: .queue(DispatchQueue(label: label)))
    }

    /// Queues `body` on the target without waiting, as ``post(_:)`` does;
    /// `dropped` runs instead when the target drops it unrun (a loop whose
    /// thread has ended, now or before the block's turn).
    func post(_ body: @escaping @Sendable () -> Void, ifDropped dropped: @escaping @Sendable () -> Void) {
        let watch = BlockWatch(dropped: dropped)
        post { watch.run(body) }
    }
}
