// Harbor — P12 at the name server: harbord sleeps when nobody asks it
// anything. Its ports' descriptors are readable only while a request waits,
// so after traffic (a client holding a name, a `harbor list`) its loop
// wakes for nothing. Before, the first `harbor list` left it spinning.
import Glibc
import HarborTestSupport
import Testing

/// CPU time (ns) and voluntary context switches (wake-ups after sleeping)
/// of every thread of `pid`.
private func sleepAccount(_ pid: pid_t) -> (cpu: Int, wakeUps: Int) {
    var cpu = 0, wakeUps = 0
    guard let directory = opendir("/proc/\(pid)/task") else { return (0, 0) }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        guard Int(tid) != nil else { continue }
        let base = "/proc/\(pid)/task/\(tid)/"
        if let schedstat = readSmallFile(base + "schedstat"), let ns = schedstat.split(separator: " ").first.flatMap({ Int($0) }) {
            cpu += ns
        }
        if let status = readSmallFile(base + "status"),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
           let count = Int(String(line.filter(\.isNumber))) {
            wakeUps += count
        }
    }
    return (cpu, wakeUps)
}


extension BootstrapTests {
    @Suite(.deadline(.seconds(60))) struct IdleTests {
        @Test func P12_harbordSleepsAfterTraffic() {
            expectNoDescriptorLeak {
                let harbord = HarbordProcess()
                #expect(harbord.waitUntilReady())
                // A client that stays connected (its uid's port keeps its
                // connection), and one that lists and leaves.
                let holder = harbord.harbor(["hold", "idle.test", "--seconds", "5"])
                #expect(eventually { harbord.harbor(["list"]).allStdout().contains("idle.test") })
                usleep(200_000)
                let before = sleepAccount(harbord.child.pid)
                usleep(500_000)
                let after = sleepAccount(harbord.child.pid)
                let cpu = Double(after.cpu - before.cpu) / 1e6
                let wakeUps = after.wakeUps - before.wakeUps
                // Idle, harbord has no timer shorter than a second here (no
                // watchdog): a few wake-ups at most, and next to no CPU.
                #expect(wakeUps <= 4, "harbord woke \(wakeUps) times in 500 ms with nothing to do")
                #expect(cpu < 5, "harbord used \(cpu) ms of CPU in 500 ms idle")
                kill(holder.pid, SIGTERM)
                holder.waitForExit()
                #expect(harbord.stop() == 0)
            }
        }
    }
}
