// Harbor — test support: one thread that ends what a stuck test waits for.
import Glibc
import HarborPorts
import Synchronization
import HarborSystem

/// Watches work that has a deadline (each test under ``TestDeadline``) from
/// one thread of its own, so that a test blocked in a wait without a
/// deadline of its own (a child's exit, a pipe read to EOF while a
/// grandchild holds it, a reply from a child that will never send it) ends
/// instead of stalling the run:
///
/// 1. At the deadline it prints, on stderr, the work's name and every
///    process below the test process, then SIGKILLs each of them that is
///    still running: a wait on a child returns, a read on its pipe ends,
///    a receive from it fails. When the run is serialized (`--no-parallel`,
///    as `Scripts/test.sh` and `Scripts/sanitizers.sh` run it) it also reaps
///    every child that was a zombie already, but the test runner's own
///    copies (swift-testing's exit-test children, which its monitor reaps),
///    and leaves each process it killed to the wait it ends. swift-testing's exit-test
///    monitor on Linux waits with `waitid(P_ALL, WNOWAIT)`, which reports the
///    same unreaped zombie again and again, so one zombie a test left behind
///    keeps every later exit test waiting for ever.
/// 2. If the work still has not returned ``grace`` after that, it is stuck
///    on something no child can release: it prints the work's name and the
///    state of every thread of the test process and ends the process with
///    exit status 124 (what `timeout` uses), so the run fails now, naming
///    the test, rather than at the CI's own time limit.
///
/// **Thread safety:** any thread.
public final class TestWatchdog: Sendable {
    /// The one watchdog of this process (its thread starts on first use).
    public static let shared = TestWatchdog()

    /// How long work may go on after its children were killed at its
    /// deadline before the watchdog ends the test process.
    public static let grace: Duration = .seconds(60)

    /// Whether the tests run one at a time (`--no-parallel` on the test
    /// runner's command line): only then is every process below this one a
    /// child of the running test, to reap.
    public static let runsSerialized: Bool = {
        (readSmallFile("/proc/self/cmdline") ?? "").split(separator: "\0").contains("--no-parallel")
    }()

    /// The work being watched, by number. A `HarborLock` (a pthread mutex),
    /// not `Synchronization.Mutex`, whose futex ThreadSanitizer cannot see:
    /// under it every access through the lock read as a race.
    private let watched = HarborLock<[Int: WatchedWork]>([:])
    private let nextNumber = Atomic<Int>(0)

    private init() {
        SystemThread.start { [self] in
            while true {
                usleep(200_000)
                check()
            }
        }.detach()
    }

    /// Runs `body` (throwing what it throws) under `limit`: past it, the
    /// watchdog kills the processes below this one and, ``grace`` later,
    /// ends the process (see the type's description). Returns what
    /// happened; the caller decides whether an expired report fails it.
    public func watch(_ name: String, limit: Duration, _ body: () throws -> Void) rethrows -> WatchReport {
        let number = begin(name, limit: limit)
        do {
            try body()
        } catch {
            _ = end(number)
            throw error
        }
        return end(number)
    }

    /// Starts watching `name`; its number, for ``end(_:)``.
    public func begin(_ name: String, limit: Duration) -> Int {
        let number = nextNumber.add(1, ordering: .relaxed).newValue
        let work = WatchedWork(name: name, limit: limit, started: .now)
        watched.withLock { $0[number] = work }
        return number
    }

    /// Stops watching work `number`; what the watchdog saw and did.
    public func end(_ number: Int) -> WatchReport {
        let work = watched.withLock { $0.removeValue(forKey: number) }
        guard let work else { preconditionFailure("TestWatchdog: work \(number) is not watched") }
        return WatchReport(name: work.name, limit: work.limit, elapsed: .now - work.started,
                           expired: work.expiredAt != nil, processesAtDeadline: work.processesAtDeadline)
    }

    /// One pass of the watchdog's thread: acts on each piece of work past
    /// its deadline, or past its deadline and the grace after it.
    private func check() {
        let now = ContinuousClock.now
        let (expiring, stuck) = watched.withLock { all -> ([Int], WatchedWork?) in
            let expiring = all.filter { entry in entry.value.expiredAt == nil && now >= entry.value.started + entry.value.limit }
                .map { entry in entry.key }
            for number in expiring { all[number]?.expiredAt = now }
            let stuck = all.values.first { work in work.expiredAt.map { now >= $0 + Self.grace } ?? false }
            return (expiring, stuck)
        }
        for number in expiring {
            let processes = ProcessTree.descendants().filter { !$0.isSanitizerHelper }
            watched.withLock { $0[number]?.processesAtDeadline = processes }
            let name = watched.withLock { $0[number]?.name } ?? "?"
            let limit = watched.withLock { $0[number]?.limit } ?? .zero
            Self.say("""
                harbor-test watchdog: \(name) is still running at its deadline (\(limit)); \
                the processes below the test process:
                \(ProcessTree.describe(processes))
                harbor-test watchdog: killing them (SIGKILL) so its waits return
                """)
            ProcessTree.kill(processes)
            // Zombies already at the deadline are leftovers no one waits
            // for; a process killed just now is left to the wait it ends.
            if Self.runsSerialized { ProcessTree.reap(processes.filter { $0.isZombie && !$0.isTestRunnerCopy }) }
        }
        if let stuck {
            Self.say("""
                harbor-test watchdog: \(stuck.name) is still running \(Self.grace) after its deadline \
                (\(stuck.limit)) and after the processes below it were killed; its threads:
                \(Self.threadStates())
                harbor-test watchdog: ending the test process (exit 124): \(stuck.name) is stuck
                """)
            _exit(124)
        }
    }

    /// One line per thread of this process: id, name, state and the kernel
    /// function it sleeps in.
    private static func threadStates() -> String {
        var lines: [String] = []
        if let directory = opendir("/proc/self/task") {
            while let entry = readdir(directory) {
                let tid = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
                }
                guard Int(tid) != nil else { continue }
                let base = "/proc/self/task/\(tid)/"
                let name = (readSmallFile(base + "comm") ?? "?").filter { $0 != "\n" }
                let stat = readSmallFile(base + "stat") ?? ""
                let state = stat.lastIndex(of: ")").map { stat[stat.index($0, offsetBy: 2)] } ?? "?"
                let wchan = readSmallFile(base + "wchan") ?? "?"
                lines.append("  thread \(tid) '\(name)' [\(state)] in \(wchan.isEmpty ? "-" : wchan)")
            }
            closedir(directory)
        }
        return lines.joined(separator: "\n")
    }

    /// Writes `text` and a newline to stderr at once (unbuffered, whatever
    /// else is buffered in this process).
    private static func say(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            written += count
        }
    }
}
