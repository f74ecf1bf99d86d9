// Harbor — an actor on a loop's thread, whose state the loop's handlers reach synchronously, checked by the compiler (A04).
import HarborSystem

/// An actor that runs on a run loop's thread (its executor is a
/// ``LoopExecutor``), so the handlers of that loop's sources, timers and
/// observers can work on its state synchronously: `confined` turns a closure taking the actor as `isolated` into a handler.
///
/// The state stays confined to the loop's thread without
/// `@unchecked Sendable`: it is the actor's isolated state, so the compiler
/// checks every access — inside a confined handler directly (the handler
/// holds the actor `isolated`), from anywhere else only with `await`
/// (which runs on the loop's thread, as a posted block). Its properties
/// need not be `Sendable`.
///
/// ```swift
/// actor Session: LoopActor {
///     nonisolated let loopExecutor: LoopExecutor
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loopExecutor.asUnownedSerialExecutor() }
///     init(loop: Loop) { loopExecutor = LoopExecutor(loop: loop) }
///     var received: [Int32] = []
/// }
///
/// let session = Session(loop: worker.loop)
/// let port = try PortSource(ReceiveRight(), session.confined { session, message in
///     session.received.append(message.id)       // isolated: no await, no lock
/// })
/// worker.loop.add(port, forMode: .default)
/// ```
///
/// Declare `unownedExecutor` as above: Swift gives an actor its own default
/// executor otherwise, and a confined handler then traps on its first call.
/// A confined handler must run on the actor's loop (``loop``): add its
/// source or timer there; on another loop's thread it traps, naming both
/// threads. Jobs of the actor run only while the loop runs a common mode
/// (``LoopExecutor``).
///
/// **Cost:** per handler call, one thread check (`Loop.isCurrent`: two
/// loads) and the runtime's executor check.
/// **Darwin equivalent:** none built in; `@MainActor` code on the main run
/// loop is the same arrangement for the main thread.
public protocol LoopActor: Actor {
    /// The executor of the loop whose thread runs the actor.
    nonisolated var loopExecutor: LoopExecutor { get }
}

extension LoopActor {
    /// The loop whose thread runs the actor.
    public nonisolated var loop: Loop { loopExecutor.loop }

    /// A handler taking one value (a timer, a message, a signalled source,
    /// descriptor events, an activity, a process's exit, a signal) that runs
    /// `body` isolated to this actor, on the actor's loop's thread.
    ///
    /// ```swift
    /// loop.add(LoopTimer(after: .seconds(1), session.confined { session, timer in session.ticks += 1 }), forMode: .default)
    /// ```
    /// Traps if called on any other thread than the loop's.
    public nonisolated func confined<Value: ~Copyable & Sendable>(
        _ body: @escaping @Sendable (isolated Self, consuming Value) -> Void
    ) -> @Sendable (consuming Value) -> Void {
        { [self] value in
            preconditionOnLoop()
            var slot: Value? = consume value
            assumeIsolated { actor in body(actor, slot.take()!) }
        }
    }

    /// A handler taking a source and a value (`PortSource`'s source and
    /// message, `DescriptorSource`'s source and events, `LoopObserver`'s
    /// observer and activity) that runs `body` isolated to this actor, on
    /// the actor's loop's thread. Traps on any other thread.
    public nonisolated func confined<Source: Sendable, Value: ~Copyable & Sendable>(
        _ body: @escaping @Sendable (isolated Self, Source, consuming Value) -> Void
    ) -> @Sendable (Source, consuming Value) -> Void {
        { [self] source, value in
            preconditionOnLoop()
            var slot: Value? = consume value
            assumeIsolated { actor in body(actor, source, slot.take()!) }
        }
    }

    /// A handler taking nothing (a version-0 source's plain handler, a
    /// posted block) that runs `body` isolated to this actor, on the actor's
    /// loop's thread. Traps on any other thread.
    public nonisolated func confined(_ body: @escaping @Sendable (isolated Self) -> Void) -> @Sendable () -> Void {
        { [self] in
            preconditionOnLoop()
            assumeIsolated { actor in body(actor) }
        }
    }

    /// Traps, naming both threads, unless the caller runs on the actor's loop.
    private nonisolated func preconditionOnLoop() {
        let loop = self.loop
        precondition(loop.isCurrent, "Harbor: a handler confined to \(Self.self) ran on thread \(SystemThread.kernelID), "
            + "but the actor's loop belongs to thread \(loop.threadID); add its source or timer to the actor's loop")
    }
}
