// Harbor — security tests: what a victim process holds, read from /proc.
import Glibc
import HarborPorts
import Synchronization
import HarborTestSupport
import HarborSystem

/// Descriptors and resident memory of another process.
struct Usage: Sendable, CustomStringConvertible {
    var descriptors: Int
    var residentBytes: Int

    init(descriptors: Int, residentBytes: Int) {
        self.descriptors = descriptors
        self.residentBytes = residentBytes
    }

    /// Reads /proc/`pid`/fd and /proc/`pid`/statm; nil once the process is gone.
    init?(of pid: pid_t) {
        guard let directory = opendir("/proc/\(pid)/fd") else { return nil }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        closedir(directory)
        guard let statm = readSmallFile("/proc/\(pid)/statm") else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        descriptors = count
        residentBytes = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    var description: String { "\(descriptors) descriptors, \(residentBytes >> 20) MiB resident" }
}

/// The share of one CPU `pid` used over `interval` (user and system time
/// from /proc/`pid`/stat); nil if it is gone.
func cpuShare(of pid: pid_t, over interval: Duration = .seconds(1)) -> Double? {
    func ticks() -> Int? {
        guard let stat = readSmallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // After the command: state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
    guard let before = ticks() else { return nil }
    let start = ContinuousClock.now
    usleep(UInt32(interval / .microseconds(1)))
    guard let after = ticks() else { return nil }
    let seconds = Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000
    return Double(after - before) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds
}


/// Samples a process's usage every 20 ms on its own thread, keeping the peaks.
final class UsageSampler {
    private final class Shared: Sendable {
        let peak = HarborLock<Usage?>(nil)
        let running = Atomic<Bool>(true)
    }

    private let shared = Shared()
    private var thread: TestThread<Void>?

    init(_ pid: pid_t) {
        let shared = self.shared
        thread = TestThread {
            while shared.running.load(ordering: .relaxed) {
                if let usage = Usage(of: pid) {
                    shared.peak.withLock { peak in
                        peak = Usage(descriptors: max(peak?.descriptors ?? 0, usage.descriptors),
                                     residentBytes: max(peak?.residentBytes ?? 0, usage.residentBytes))
                    }
                }
                usleep(20_000)
            }
        }
    }

    /// Stops sampling and returns the peaks (nil if the process was never seen).
    func stop() -> Usage? {
        shared.running.store(false, ordering: .relaxed)
        thread?.join()
        thread = nil
        return shared.peak.withLock { $0 }
    }
}
