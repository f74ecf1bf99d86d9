// HarborXPC — accepting a session whose handler is async (Swift concurrency).
import HarborSystem

extension XPCListener.IncomingSessionRequest {
    /// Accepts the session with an async message handler: each message runs
    /// it in a task of its own (on Swift concurrency's executors: the
    /// global one, or the actor it is isolated to or awaits), one message
    /// at a time, in order: the session waits for the task before it takes
    /// the next message, on the listener's ``XPCHandlerTarget``. A non-nil
    /// value the handler returns is the reply when the sender waits for one.
    ///
    /// ```swift
    /// let clock = Clock()                                  // an actor
    /// request.accept { message async in
    ///     guard let ask = try? message.decode(as: Ask.self) else { return nil }
    ///     return await clock.now(offset: ask.offset)
    /// }
    /// ```
    ///
    /// Use it with ``XPCHandlerTarget/ownThread`` or a queue: with a
    /// ``XPCHandlerTarget/loop(_:)`` target the loop's thread waits for the
    /// task, so the task must not need that loop (a `LoopActor` of it).
    public func accept(
        _ messageHandler: @escaping @Sendable (XPCReceivedMessage) async -> (any Encodable & Sendable)?
    ) -> Decision {
        accept { message -> (any Encodable)? in
            let outcome = HarborLock<(any Encodable & Sendable)??>(nil)
            let done = Parker()
            Task {
                let reply = await messageHandler(message)
                outcome.withLock { $0 = .some(reply) }
                done.unpark()
            }
            while true {
                if let reply = outcome.withLock({ $0 }) { return reply }
                _ = done.park(until: .never)
            }
        }
    }
}
