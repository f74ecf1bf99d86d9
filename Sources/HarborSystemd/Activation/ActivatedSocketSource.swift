// Harbor — an activated socket handed to a run loop as a source.
import CHarborLinux
import Glibc
import HarborRunLoop

/// Schedules an ``ActivatedSocket`` on a run loop: the handler runs on the
/// loop's thread whenever the socket is readable (a listening socket: a
/// connection waits to be accepted; a datagram socket: a datagram waits).
///
/// The socket's descriptor sits, level-triggered, in the mode's waitset, so
/// it wakes a sleeping loop by itself; an observer checks it with one
/// non-blocking `poll` per pass and signals a version-0 source, whose run
/// counts as "handled source". The handler must consume the readiness
/// (`accept`, `recv`), or the loop keeps waking for it, as with any
/// level-triggered source.
///
/// **Cost:** one `poll(…, 0)` per pass of `mode`; no thread.
/// **Thread safety:** make and invalidate on the loop's thread.
/// **Darwin equivalent:** `CFSocket`/`CFFileDescriptor` sources on the
/// descriptors `launch_activate_socket` returned.
public final class ActivatedSocketSource: @unchecked Sendable {
    // @unchecked: confined to the loop's thread (the init checks it; the
    // observer and source run there).

    /// The socket being watched (kept alive by the source).
    public let socket: ActivatedSocket
    private let waitset: CInt
    private var source: LoopSource?
    private var observer: LoopObserver?

    /// Watches `socket` in `loop`'s `mode` and calls `handler` with it each
    /// time it is readable.
    /// - Throws: ``SystemdError/Code/wrongThread`` off the loop's thread,
    ///   ``SystemdError/Code/invalidArgument`` for `.common`.
    public init(
        _ socket: ActivatedSocket, loop: Loop, mode: LoopMode = .default,
        _ handler: @escaping @Sendable (ActivatedSocket) -> Void
    ) throws(SystemdError) {
        self.socket = socket
        guard loop.isCurrent else {
            throw SystemdError(.wrongThread, call: "ActivatedSocketSource.init", "schedule a socket on the loop's own thread")
        }
        guard mode != .common, let waitset = loop.waitsetDescriptor(for: mode) else {
            throw SystemdError(.invalidArgument, call: "ActivatedSocketSource.init", "name one existing mode (not `.common`)")
        }
        self.waitset = waitset
        var registration = epoll_event(events: UInt32(EPOLLIN.rawValue), data: epoll_data_t(u64: 0))
        guard epoll_ctl(waitset, EPOLL_CTL_ADD, socket.descriptor, &registration) == 0 else {
            throw SystemdError(.system, errno: charbor_errno(), call: "epoll_ctl", "cannot watch \(socket)")
        }
        let source = LoopSource(label: "activated \(socket.name)") { handler(socket) }
        let descriptor = socket.descriptor
        let observer = LoopObserver(activities: [.beforeSources, .afterWaiting], order: Int.max / 2) { _ in
            var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&probe, 1, 0) > 0 && probe.revents != 0 && !source.isSignalled { source.signal() }
        }
        self.source = source
        self.observer = observer
        loop.add(source, forMode: mode)
        loop.add(observer, forMode: mode)
    }

    deinit { invalidate() }

    /// Stops watching; the socket stays open (owned by ``socket``).
    public func invalidate() {
        guard let source else { return }
        source.invalidate()
        observer?.invalidate()
        self.source = nil
        observer = nil
        _ = epoll_ctl(waitset, EPOLL_CTL_DEL, socket.descriptor, nil)
    }
}
