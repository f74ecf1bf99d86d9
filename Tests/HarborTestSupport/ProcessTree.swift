// Harbor — test support: the test process's descendants, listed, killed and reaped.
import Glibc

/// The processes descended from this one (children, their children, ...),
/// found by their parent ids in `/proc`, so a process started by any means
/// (`ChildProcess`, `Child`, `posix_spawn`, Foundation's `Process`, an exit
/// test) is seen.
public enum ProcessTree {
    /// Every process below this one now, parents before their children.
    public static func descendants() -> [RelatedProcess] {
        var byParent: [pid_t: [RelatedProcess]] = [:]
        if let directory = opendir("/proc") {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
                }
                if let pid = pid_t(name), let process = RelatedProcess(pid: pid) {
                    byParent[process.parent, default: []].append(process)
                }
            }
            closedir(directory)
        }
        var found: [RelatedProcess] = []
        var parents = [getpid()]
        while let parent = parents.popLast() {
            for child in byParent[parent] ?? [] {
                found.append(child)
                parents.append(child.pid)
            }
        }
        return found
    }

    /// This process's own children (not their children).
    public static func children() -> [RelatedProcess] {
        descendants().filter { $0.parent == getpid() }
    }

    /// SIGKILLs every process in `processes` that is not a zombie already.
    /// A test waiting on one of them (its exit, its output, a reply from
    /// it) then sees it gone and goes on.
    public static func kill(_ processes: [RelatedProcess]) {
        for process in processes where !process.isZombie {
            _ = Glibc.kill(process.pid, SIGKILL)
        }
    }

    /// Reaps each of `processes` that is this process's child, waiting at
    /// most until `deadline` for a killed one to finish exiting; the pids
    /// still not reaped then.
    @discardableResult
    public static func reap(_ processes: [RelatedProcess],
                            before deadline: ContinuousClock.Instant = .now + .seconds(5)) -> [pid_t] {
        var left = processes.filter { $0.parent == getpid() }.map(\.pid)
        while !left.isEmpty {
            left.removeAll { pid in
                var status: CInt = 0
                let reaped = waitpid(pid, &status, WNOHANG)
                return reaped == pid || (reaped < 0 && errno == ECHILD)
            }
            if left.isEmpty || ContinuousClock.now >= deadline { break }
            usleep(10_000)
        }
        return left
    }

    /// One line per process, indented under its parent, for a message.
    public static func describe(_ processes: [RelatedProcess]) -> String {
        guard !processes.isEmpty else { return "none" }
        let ids = Set(processes.map(\.pid))
        return processes.map { process in
            (ids.contains(process.parent) ? "    └ " : "  ") + process.description
        }.joined(separator: "\n")
    }
}
