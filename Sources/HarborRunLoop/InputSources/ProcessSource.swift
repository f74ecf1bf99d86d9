// Harbor — process sources: a child's exit as a run-loop source, over a pidfd (RL19).
import Glibc  // types only: pid_t
import HarborPorts
import HarborSystem
import Synchronization

/// How a watched process ended.
///
/// **Thread safety:** a value; any thread.
public struct ProcessExit: Hashable, Sendable, CustomStringConvertible {
    /// What ended the process.
    public enum Status: Hashable, Sendable {
        /// It called `exit` (or returned from `main`) with this code.
        case exited(code: CInt)
        /// A signal killed it (`coreDumped` if it left a core).
        case killed(signal: CInt, coreDumped: Bool)
        /// It ended, but it is not this process's child, or someone else
        /// reaped it first, so its status is unknown here.
        case unavailable
    }

    /// The process id it had.
    public let pid: pid_t
    /// How it ended.
    public let status: Status

    public var description: String {
        switch status {
        case .exited(let code): "process \(pid) exited with code \(code)"
        case .killed(let signal, let core): "process \(pid) killed by signal \(signal)\(core ? " (core dumped)" : "")"
        case .unavailable: "process \(pid) ended (status unavailable: not our child, or already reaped)"
        }
    }
}

/// A process's exit as a run-loop source: the handler runs once, on the
/// loop's thread, when the process ends — and, if it is this process's
/// child, after reaping it (so no zombie is left and no `SIGCHLD` handler
/// is needed).
///
/// Race-free: the source holds a pidfd (`pidfd_open`), which names the
/// process itself, not its number: a pid reused after the process died can
/// never be mistaken for it, and the exit status is collected with
/// `waitid(P_PIDFD)`, which only ever reaps this very child.
/// ``sendSignal(_:)`` uses the same pidfd (`pidfd_send_signal`), so it can
/// never signal an unrelated process that inherited the number.
///
/// After the handler ran the source invalidates itself; its pidfd is
/// closed when the source is released.
///
/// ```swift
/// let child = try ProcessSource(pid: pid) { exit in print(exit) }
/// loop.add(child, forMode: .default)
/// ```
///
/// **Cost:** one descriptor (the pidfd) until the process ended.
/// **Thread safety:** every method, any thread; the handler runs on the
/// loop's thread. **Darwin equivalent:** `DispatchSource.makeProcessSource`
/// (`DISPATCH_SOURCE_TYPE_PROC` with `.exit`), a kqueue `EVFILT_PROC` filter.
public final class ProcessSource: Sendable, CustomStringConvertible, WaitsetSource {
    /// The watched process's id.
    public let pid: pid_t
    /// The pidfd, closed when the source is released.
    private let pidfd: OwnedDescriptor
    let handler: @Sendable (ProcessExit) -> Void
    let membership = HarborLock(Memberships())
    private let valid = Atomic(true)
    /// Set by the one pass that reaps and reports. Atomic: a source in
    /// several loops may be served by two of their threads at once.
    private let reported = Atomic(false)

    /// Watches process `pid` (usually a child this process spawned).
    /// - Throws: ``SourceError/Code/noSuchProcess`` if no such process
    ///   exists (an unreaped child still exists), ``SourceError/Code/systemCallFailed``
    ///   if `pidfd_open` fails otherwise (descriptors exhausted; Linux < 5.3).
    public init(pid: pid_t, _ handler: @escaping @Sendable (ProcessExit) -> Void) throws(SourceError) {
        guard pid > 0 else { throw SourceError(.invalidArgument, "ProcessSource needs a positive pid, got \(pid)") }
        let fd: CInt
        do {
            fd = try ProcessControl.openDescriptor(pid)
        } catch where error.isNoSuchProcess {
            throw SourceError(.noSuchProcess, "process \(pid) does not exist", underlying: error)
        } catch {
            throw SourceError(.systemCallFailed, "cannot watch process \(pid)", underlying: error)
        }
        self.pid = pid
        pidfd = OwnedDescriptor(taking: fd)
        self.handler = handler
    }

    /// Sends `signal` to the process through its pidfd (never to a process
    /// that reused its pid). Any thread. C: `pidfd_send_signal(2)`.
    /// - Throws: ``SourceError/Code/noSuchProcess`` once it has ended and
    ///   been reaped.
    public func sendSignal(_ signal: CInt) throws(SourceError) {
        do {
            try ProcessControl.sendSignal(signal, through: pidfd.rawValue)
        } catch where error.isNoSuchProcess {
            throw SourceError(.noSuchProcess, "process \(pid) has ended", underlying: error)
        } catch {
            throw SourceError(.systemCallFailed, "cannot signal process \(pid)", underlying: error)
        }
    }

    /// False once the process's exit was reported or ``invalidate()`` ran.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Stops watching; the handler never runs. The process is not reaped.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        leaveEveryLoop()
    }

    public var description: String { "ProcessSource(pid \(pid), valid: \(isValid))" }

    let order = 0
    var waitDescriptor: CInt { pidfd.rawValue }
    var waitEvents: EpollEvents { .readable }

    /// The pidfd is readable once the process has ended: reaps it and
    /// reports, once, then leaves every loop.
    func serve(_ events: EpollEvents, on loop: Loop, in mode: ModeState) -> Bool {
        guard isServed(by: loop, in: mode), !reported.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        Callout.process(self, Self.reap(pidfd: pidfd.rawValue, pid: pid))
        invalidate()
        return true
    }

    /// Collects the exit status with `waitid(P_PIDFD, WEXITED)`.
    private static func reap(pidfd: CInt, pid: pid_t) -> ProcessExit {
        switch ProcessControl.reap(pidfd: pidfd) {
        case .exited(let code): ProcessExit(pid: pid, status: .exited(code: code))
        case .killed(let signal, let core): ProcessExit(pid: pid, status: .killed(signal: signal, coreDumped: core))
        case .unavailable: ProcessExit(pid: pid, status: .unavailable)
        }
    }
}

extension Loop {
    /// Watches the process in `mode` (one mode is enough: it fires once).
    /// Any thread.
    public func add(_ source: ProcessSource, forMode mode: LoopMode) { add(.waitset(source), to: mode) }
    /// Removes the process source from `mode`.
    public func remove(_ source: ProcessSource, forMode mode: LoopMode) { remove(.waitset(source), from: mode) }
    /// Whether the process source is in `mode`.
    public func contains(_ source: ProcessSource, inMode mode: LoopMode) -> Bool { contains(.waitset(source), mode) }
}

extension Callout {
    /// A process source's handler (libdispatch's process source event handler).
    @inline(never)
    static func process(_ source: ProcessSource, _ exit: ProcessExit) {
        source.handler(exit)
    }
}
