// HarborXPC — where a listener's and a session's handlers run.
import Dispatch
import HarborRunLoop

/// Where a listener's or a session's handlers run (XPC's `targetQueue:`,
/// and a Harbor run loop): the listener's incoming-session handler, each
/// session's message handler and cancellation handler, and a client
/// session's reply handlers, cancellation handler and its subscriptions'
/// event handlers (``XPCSubscription/setEventHandler(_:)``).
///
/// ```swift
/// let worker = LoopWorker(name: "clock")
/// let listener = try XPCListener(service: "com.example.clock", target: .loop(worker.loop)) { request in
///     request.accept { message in Now(seconds: 42) }    // on the worker's thread
/// }
/// let session = try XPCSession(machService: "com.example.clock", target: .queue(.main))
/// ```
///
/// Whatever the target, a session's handlers run one at a time, in the
/// order their messages came (XPC's serial target queue): each listener
/// and each session makes a serial queue of its own that targets a given
/// queue (so a concurrent queue serves sessions side by side, each in its
/// order), and a run loop runs one block at a time. The thread that
/// receives a session's messages hands each to the target and waits for
/// its handler to return before it takes the next, so a peer's messages
/// stay held to its port's queue limit rather than piling up on the target.
/// So code running on a serial target must not wait for a listener that
/// runs its handlers there (open a session to it, or `sendSync` it): the
/// answer would wait for the very code that waits for it.
///
/// For Swift concurrency, accept with an async handler
/// (the async `accept(_:)` of ``XPCListener/IncomingSessionRequest``), which may
/// `await` any actor; an actor whose executor is a loop (`LoopActor`) is
/// reached synchronously from handlers with `.loop` of that loop.
public enum XPCHandlerTarget: Sendable {
    /// Harbor's default: the listener decides session requests on its own
    /// thread, each session runs its handlers on the thread that serves
    /// it, each reply handler runs on the thread that received its reply
    /// (a `sendSync` caller's or the session's reply thread), and each
    /// subscription's event handler on a serial dispatch queue of the
    /// subscription's own (never on the thread that receives every
    /// subscription's events).
    case ownThread
    /// A dispatch queue (XPC's `targetQueue:`): handlers run on a serial
    /// queue of the listener's or session's own that targets this one, so
    /// `dispatchPrecondition(condition: .onQueue(queue))` holds in them and
    /// the queue's specific values are seen.
    case queue(DispatchQueue)
    /// A Harbor run loop: each handler runs on the loop's thread, posted as
    /// a block for its common modes (`Loop.performAndWait`), so it runs only
    /// while the loop runs a common mode (a `LoopWorker` does). Once the
    /// loop's thread has ended, a message is released unanswered (its
    /// caller gets ``XPCRichError/Code/noReply``), a session request is
    /// rejected, and a cancellation handler does not run.
    case loop(Loop)
}
