// Harbor — a port's messages as an AsyncSequence, with no thread parked per port (A01).
import HarborPorts
import Synchronization
import HarborSystem

/// A port's messages, consumed with `for try await message in messages`.
///
/// No thread waits per port: while a task awaits a message, the port's
/// readiness descriptor (readable exactly while a message waits) sits in
/// the waitset of one shared Harbor loop thread, `harbor.async-ports`,
/// which resumes the task when a message arrives and then stops watching.
/// Any number of ports share that one thread; a message already waiting is
/// taken at once, with no system call and no hop.
///
/// The sequence owns the port's receive right (moved in), so the port lives
/// as long as the sequence. It never ends by itself (a Mach receive right
/// has no end of stream); cancelling the awaiting task ends the wait: the
/// port leaves the shared loop and `next()` throws `CancellationError`. The
/// sequence has one consumer at a time: iterating it from two tasks at once
/// is a programmer error (the second wait traps).
///
/// **Cost:** per message that is already queued, one lock; per message
/// that must be awaited, two `epoll_ctl` on the shared thread's waitset,
/// one wake-up of that thread and one task resumption.
/// **Thread safety:** the sequence may be shared (Sendable); iterate it
/// from one task at a time.
/// **Darwin equivalent:** none built in; what `DispatchSource.makeMachReceiveSource`
/// feeding an `AsyncStream` gives, minus the unbounded buffer (here the
/// port's own queue, with its limit, is the buffer).
public final class PortMessages: AsyncSequence, Sendable {
    /// Each message, readable at once and taken out once (`Message` is `~Copyable`).
    public typealias Element = ReceivedMessage
    /// Iteration ends only by cancellation.
    public typealias Failure = CancellationError

    let receive: ReceiveRight
    private let readiness: DescriptorSource
    private let waiter = WaitSlot()

    /// The awaiting task's continuation, shared with the shared thread's handler.
    final class WaitSlot: Sendable {
        struct State {
            var continuation: CheckedContinuation<Bool, Never>?
            var cancelled = false
        }
        let state = HarborLock(State())
        func withLock<R>(_ body: (inout State) -> R) -> R { state.withLock { body(&$0) } }
    }

    /// Moves `receive` into a new sequence of its messages.
    /// - Throws: `PortError.Code.resourceShortage` if the port's readiness
    ///   descriptor cannot be made.
    public init(_ receive: consuming ReceiveRight) throws(PortError) {
        let fd = try receive.core.readinessDescriptor()
        self.receive = receive
        let waiter = self.waiter
        // The port owns the descriptor; this source only watches it.
        let box = SourceBox()
        do {
            readiness = try DescriptorSource(descriptor: fd, events: .readable, label: "async port") { _ in
                // On the shared thread: a message waits. Stop watching, then resume.
                let continuation = waiter.withLock { $0.continuation.take() }
                if let source = box.source { AsyncPortWatcher.loop.remove(source, forMode: .default) }
                continuation?.resume(returning: true)
            }
        } catch {
            throw PortError(.invalidArgument, "the port's readiness descriptor is invalid")
        }
        box.source = readiness
    }

    /// A send right to the port.
    public func makeSendRight() -> SendRight { receive.makeSendRight() }

    /// The port's name.
    public var portName: PortName { receive.name }

    /// Whether the port is in the shared loop's waitset now (a task awaits it).
    var isWatched: Bool { AsyncPortWatcher.loop.contains(readiness, inMode: .default) }

    /// The next message: at once if one is queued, otherwise when one arrives.
    /// - Throws: `CancellationError` if the task is cancelled while waiting.
    func next() async throws(CancellationError) -> ReceivedMessage? {
        while true {
            if let message = receive.tryReceive() { return ReceivedMessage(message) }
            if Task.isCancelled { throw CancellationError() }
            guard await waitForMessage() else { throw CancellationError() }
        }
    }

    /// Suspends until the port is readable (true) or the task is cancelled (false).
    private func waitForMessage() async -> Bool {
        let readiness = self.readiness
        let waiter = self.waiter
        waiter.withLock { $0.cancelled = false }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let proceed = waiter.withLock { state -> Bool in
                    precondition(state.continuation == nil, "Harbor: PortMessages iterated by two tasks at once")
                    if state.cancelled { return false }
                    state.continuation = continuation
                    return true
                }
                if proceed {
                    AsyncPortWatcher.loop.add(readiness, forMode: .default)
                } else {
                    continuation.resume(returning: false)
                }
            }
        } onCancel: {
            let continuation = waiter.withLock { state in
                state.cancelled = true
                return state.continuation.take()
            }
            guard let continuation else { return }
            AsyncPortWatcher.loop.remove(readiness, forMode: .default)
            continuation.resume(returning: false)
        }
    }

    deinit { readiness.invalidate() }

    /// Iterates the messages.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let messages: PortMessages

        /// The next message; waits without holding a thread.
        public mutating func next() async throws(CancellationError) -> ReceivedMessage? {
            try await messages.next()
        }

        /// The next message, resuming on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CancellationError) -> ReceivedMessage? {
            try await messages.next()
        }
    }

    /// An iterator awaiting the port's messages one by one.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(messages: self) }
}

extension ReceiveRight {
    /// Moves this receive right into an async sequence of its messages (A01).
    /// - Throws: `PortError.Code.resourceShortage` if the port's readiness
    ///   descriptor cannot be made.
    public consuming func messages() throws(PortError) -> PortMessages {
        try PortMessages(self)
    }
}

/// Lets the readiness handler find its own source without a cycle.
private final class SourceBox: @unchecked Sendable {
    // @unchecked: written once in PortMessages.init before the source can be
    // added to any loop; read only afterwards.
    weak var source: DescriptorSource?
}

/// The one loop thread that watches every awaited port.
enum AsyncPortWatcher {
    /// Started on first use; lives for the rest of the process.
    static let thread = LoopWorker(name: "harbor.async-ports")
    static var loop: Loop { thread.loop }
}
