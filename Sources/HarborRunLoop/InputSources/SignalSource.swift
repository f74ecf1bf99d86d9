// Harbor — signal sources: Unix signals as a run-loop source, over a signalfd (RL19).
import Glibc  // types only: pid_t, uid_t
import HarborPorts
import HarborSystem
import Synchronization

/// One delivered signal, as a signal source reports it.
///
/// **Thread safety:** a value; any thread.
public struct SignalInfo: Hashable, Sendable, CustomStringConvertible {
    /// The signal number (`SIGTERM`, …).
    public let signal: CInt
    /// The sending process's id (0 when the kernel sent it).
    public let senderPID: pid_t
    /// The sending process's real user id.
    public let senderUID: uid_t

    public var description: String { "signal \(signal) from pid \(senderPID) (uid \(senderUID))" }
}

/// Unix signals as a run-loop source: the handler runs on the loop's
/// thread, as ordinary code (no async-signal-safety rules), once per
/// delivered signal. So a daemon handles `SIGTERM` (or `SIGHUP`, `SIGUSR1`)
/// in its loop, like any other event.
///
/// How: a `signalfd` reads the signals from the kernel's pending set. That
/// only works if the signals are **blocked in every thread** of the process;
/// a thread that does not block one would instead take it the ordinary way
/// (for `SIGTERM`, the default action kills the process). Threads inherit
/// their creator's mask, so block the signals first thing in `main`, before
/// any thread starts — ``block(_:)`` does that:
///
/// ```swift
/// try SignalSource.block([SIGTERM])            // first line of main
/// let term = try SignalSource(signals: [SIGTERM]) { info in Loop.main.stop() }
/// Loop.main.add(term, forMode: .default)
/// ```
///
/// Misuse is an error, not a mystery: the initializer checks every thread's
/// mask (`/proc/self/task/*/status`) and throws
/// ``SourceError/Code/signalNotBlocked`` naming the threads that do not
/// block the signal. Consequences to know: a blocked signal stays blocked in
/// child processes you spawn unless you reset their mask
/// (`posix_spawnattr_setsigmask`), and other signal consumers (`sigwait`,
/// another signalfd for the same signal) compete for the same deliveries.
///
/// **Cost:** one descriptor; per signal, one `read` on the loop's thread.
/// **Thread safety:** every method, any thread; the handler runs on the
/// loop's thread. **Darwin equivalent:** `DispatchSource.makeSignalSource`
/// (where, too, the signal's default action must be disabled first).
public final class SignalSource: Sendable, CustomStringConvertible, WaitsetSource {
    /// The signals this source receives.
    public let signals: [CInt]
    /// The signalfd, closed when the source is released.
    private let signalDescriptor: OwnedDescriptor
    let handler: @Sendable (SignalInfo) -> Void
    let membership = HarborLock(Memberships())
    private let valid = Atomic(true)

    /// Blocks `signals` in the calling thread (and so in every thread it
    /// creates afterwards). Call at the start of `main`, before any thread
    /// exists; ``init(signals:_:)`` checks that it was done everywhere.
    /// C: `pthread_sigmask(SIG_BLOCK)`.
    /// - Throws: ``SourceError/Code/invalidArgument`` for a signal that
    ///   cannot be blocked (`SIGKILL`, `SIGSTOP`) or is out of range.
    public static func block(_ signals: [CInt]) throws(SourceError) {
        try check(signals)
        do {
            try Signals.block(signals)
        } catch {
            throw SourceError(.systemCallFailed, "cannot block signals \(signals)", underlying: error)
        }
    }

    /// A source receiving `signals`, which must already be blocked in every
    /// thread of the process.
    /// - Throws: ``SourceError/Code/signalNotBlocked`` (naming the threads)
    ///   if some thread does not block one of them;
    ///   ``SourceError/Code/invalidArgument`` for an empty list, `SIGKILL`
    ///   or `SIGSTOP`; ``SourceError/Code/systemCallFailed`` if `signalfd` fails.
    public init(signals: [CInt], _ handler: @escaping @Sendable (SignalInfo) -> Void) throws(SourceError) {
        guard !signals.isEmpty else { throw SourceError(.invalidArgument, "SignalSource needs at least one signal") }
        try Self.check(signals)
        let unblocked = Signals.threadsNotBlocking(signals)
        guard unblocked.isEmpty else {
            let names = unblocked.map { "thread \($0.thread) (signal \($0.signal))" }.joined(separator: ", ")
            throw SourceError(.signalNotBlocked, "a signalfd only receives blocked signals, but \(names) does not block it; "
                + "call SignalSource.block(\(signals)) at the start of main, before any thread starts (threads inherit the mask)")
        }
        let fd: CInt
        do {
            fd = try Signals.openDescriptor(for: signals)
        } catch {
            throw SourceError(.systemCallFailed, "cannot make a signalfd for \(signals)", underlying: error)
        }
        self.signals = signals
        signalDescriptor = OwnedDescriptor(taking: fd)
        self.handler = handler
    }

    /// False once ``invalidate()`` ran.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Stops receiving; the signals stay blocked (and so pending) until
    /// unblocked. The signalfd is closed when the source is released.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        leaveEveryLoop()
    }

    public var description: String { "SignalSource(\(signals), valid: \(isValid))" }

    let order = 0
    var waitDescriptor: CInt { signalDescriptor.rawValue }
    var waitEvents: EpollEvents { .readable }

    /// Reads up to ``batchLimit`` delivered signals, one handler call each
    /// (RL20); the rest wait for the next pass.
    func serve(_ events: EpollEvents, on loop: Loop, in mode: ModeState) -> Bool {
        var handled = false
        for _ in 0..<Self.batchLimit {
            guard isServed(by: loop, in: mode), let info = Signals.readDelivered(signalDescriptor.rawValue) else { break }
            Callout.signal(self, SignalInfo(signal: info.signal, senderPID: info.senderPID, senderUID: info.senderUID))
            handled = true
        }
        return handled
    }

    /// At most this many signals are handled per pass.
    static let batchLimit = 16

    /// Checks that every signal can be received through a signalfd.
    private static func check(_ signals: [CInt]) throws(SourceError) {
        for signal in signals where !Signals.canBeReceived(signal) {
            throw SourceError(.invalidArgument, "signal \(signal) cannot be received through a signal source")
        }
    }
}

extension Loop {
    /// Receives the source's signals while the loop runs in `mode`. Any thread.
    public func add(_ source: SignalSource, forMode mode: LoopMode) { add(.waitset(source), to: mode) }
    /// Removes the signal source from `mode`.
    public func remove(_ source: SignalSource, forMode mode: LoopMode) { remove(.waitset(source), from: mode) }
    /// Whether the signal source is in `mode`.
    public func contains(_ source: SignalSource, inMode mode: LoopMode) -> Bool { contains(.waitset(source), mode) }
}

extension Callout {
    /// A signal source's handler (libdispatch's signal source event handler).
    @inline(never)
    static func signal(_ source: SignalSource, _ info: SignalInfo) {
        source.handler(info)
    }
}
