// clock-client — when did the service's process exit? (a pidfd on a run loop)
import Glibc
import HarborRunLoop
import Synchronization

/// Notes the moment a process exits: HarborRunLoop's `ProcessSource` (a
/// pidfd, readable once the process has ended) on a worker's run loop.
/// The client uses it to say how long after the service's death its
/// pending call failed.
final class DeathWatch: Sendable {
    private static let worker = LoopWorker(name: "clock-client.death-watch")
    /// The watched process.
    let pid: pid_t
    private let exited = Mutex<ContinuousClock.Instant?>(nil)
    private let source = Mutex<ProcessSource?>(nil)

    /// Watches `pid` (nothing is noted if it cannot be watched).
    init(pid: pid_t) {
        self.pid = pid
        let watched = try? ProcessSource(pid: pid) { [weak self] _ in
            self?.exited.withLock { $0 = $0 ?? .now }
        }
        guard let watched else { return }
        source.withLock { $0 = watched }
        Self.worker.loop.add(watched, forMode: .default)
    }

    deinit { source.withLock { $0?.invalidate() } }

    /// When the process exited, waiting up to `patience` for the news.
    func exit(within patience: Duration) -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + patience
        while true {
            if let seen = exited.withLock({ $0 }) { return seen }
            if ContinuousClock.now >= deadline { return nil }
            usleep(200)
        }
    }
}
