// Harbor — an activated socket handed to a run loop as a source.
import HarborRunLoop

/// Schedules an ``ActivatedSocket`` on a run loop: the handler runs on the
/// loop's thread whenever the socket is readable (a listening socket: a
/// connection waits to be accepted; a datagram socket: a datagram waits).
///
/// A thin owner of a run-loop `DescriptorSource` (RL18): the socket sits,
/// level-triggered, in the mode's waitset, so it wakes a sleeping loop by
/// itself, and handling it counts as "handled source". The handler must
/// consume the readiness (`accept`, `recv`), or the loop keeps waking for
/// it, as with any level-triggered source.
///
/// **Cost:** one `epoll_ctl` to start and one to stop; nothing per pass.
/// **Thread safety:** any thread.
/// **Darwin equivalent:** `CFSocket`/`CFFileDescriptor` sources on the
/// descriptors `launch_activate_socket` returned.
public final class ActivatedSocketSource: Sendable {
    /// The socket being watched (kept alive by the source).
    public let socket: ActivatedSocket
    private let source: DescriptorSource

    /// Watches `socket` in `loop`'s `mode` and calls `handler` with it each
    /// time it is readable.
    /// - Throws: ``SystemdError/Code/invalidArgument`` for `.common` (name
    ///   one mode) or a socket that is no longer open.
    public init(
        _ socket: ActivatedSocket, loop: Loop, mode: LoopMode = .default,
        _ handler: @escaping @Sendable (ActivatedSocket) -> Void
    ) throws(SystemdError) {
        self.socket = socket
        guard mode != .common else {
            throw SystemdError(.invalidArgument, call: "ActivatedSocketSource.init", "name one mode (not `.common`)")
        }
        do {
            source = try DescriptorSource(descriptor: socket.descriptor, events: .readable,
                                          label: "activated \(socket.name)") { _ in handler(socket) }
        } catch {
            throw SystemdError(.invalidArgument, call: "ActivatedSocketSource.init", "cannot watch \(socket): \(error)")
        }
        loop.add(source, forMode: mode)
    }

    deinit { invalidate() }

    /// Stops watching; the socket stays open (owned by ``socket``).
    public func invalidate() { source.invalidate() }
}
