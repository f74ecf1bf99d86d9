// Harbor — a descriptor the server's run loop watches: the listening socket, the bootstrap port, a pidfd.
import CHarborLinux
import Glibc
import HarborRunLoop

/// Calls a handler on the loop's thread whenever a descriptor is readable.
///
/// The descriptor sits, level-triggered, in the mode's waitset, so it wakes
/// a sleeping loop; an observer checks it with one non-blocking `poll` per
/// pass and signals a version-0 source, whose handler must consume the
/// readiness (accept, receive, reap). The same shape as HarborSystemd's
/// `ActivatedSocketSource`, until the run loop has descriptor sources (RL18).
///
/// **Cost:** one `poll(…, 0)` per pass of the mode; no thread.
/// **Thread safety:** make and invalidate on the loop's thread.
final class DescriptorWatch: @unchecked Sendable {
    // @unchecked: confined to the loop's thread (made, run and invalidated there).
    private let descriptor: CInt
    private let waitset: CInt
    private var source: LoopSource?
    private var observer: LoopObserver?

    /// Watches `descriptor` (borrowed: it must outlive the watch) in `loop`'s `mode`.
    init?(_ descriptor: CInt, loop: Loop, mode: LoopMode, label: String, _ handler: @escaping @Sendable () -> Void) {
        guard loop.isCurrent, let waitset = loop.waitsetDescriptor(for: mode) else { return nil }
        var registration = epoll_event(events: UInt32(EPOLLIN.rawValue), data: epoll_data_t(u64: 0))
        guard epoll_ctl(waitset, EPOLL_CTL_ADD, descriptor, &registration) == 0 else { return nil }
        self.descriptor = descriptor
        self.waitset = waitset
        let source = LoopSource(label: label, handler)
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

    /// Stops watching (the descriptor stays open).
    func invalidate() {
        guard let source else { return }
        source.invalidate()
        observer?.invalidate()
        self.source = nil
        observer = nil
        _ = epoll_ctl(waitset, EPOLL_CTL_DEL, descriptor, nil)
    }
}
