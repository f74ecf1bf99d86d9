// Harbor — a descriptor the server's run loop watches: the listening socket, the bootstrap port, a pidfd.
import HarborRunLoop

/// Calls a handler on the loop's thread whenever a descriptor is readable:
/// a thin owner of a run-loop ``DescriptorSource`` (RL18) that leaves the
/// loop when the watch is invalidated or released.
///
/// The handler must consume the readiness (accept, receive, reap): the
/// source is level-triggered.
///
/// **Cost:** one `epoll_ctl` to start and one to stop; nothing per pass.
/// **Thread safety:** any thread.
final class DescriptorWatch: Sendable {
    private let source: DescriptorSource

    /// Watches `descriptor` (borrowed: it must outlive the watch) in `loop`'s
    /// `mode`; among descriptors ready in one pass, lower `order`s are served first.
    init?(_ descriptor: CInt, loop: Loop, mode: LoopMode, label: String, order: Int = 0,
          _ handler: @escaping @Sendable () -> Void) {
        guard let source = try? DescriptorSource(descriptor: descriptor, events: .readable, order: order, label: label, { _ in
            handler()
        }) else { return nil }
        self.source = source
        loop.add(source, forMode: mode)
    }

    deinit { invalidate() }

    /// Stops watching (the descriptor stays open).
    func invalidate() { source.invalidate() }
}
