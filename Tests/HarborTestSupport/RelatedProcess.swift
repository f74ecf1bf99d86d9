// Harbor — test support: one process of this process's tree, as /proc describes it.
import Glibc

/// A process descended from the test process (a child, or a child's child),
/// as `/proc/PID/stat` and `/proc/PID/cmdline` described it when listed.
public struct RelatedProcess: Sendable, Hashable, CustomStringConvertible {
    /// Its process id.
    public let pid: pid_t
    /// Its parent's process id.
    public let parent: pid_t
    /// Its state letter: R running, S sleeping, D disk wait, T stopped, Z zombie.
    public let state: Character
    /// Its name (the kernel's `comm`, at most 15 characters; a zombie keeps it).
    public let name: String
    /// Its command line, arguments joined by spaces (its name in brackets
    /// when the command line is empty, as for a zombie).
    public let command: String

    /// Whether it has exited and waits to be reaped by its parent.
    public var isZombie: Bool { state == "Z" }

    /// Whether it is a sanitizer's symbolizer (llvm-symbolizer, started by
    /// ThreadSanitizer or AddressSanitizer to print a report, and kept for
    /// the next one): the runtime's child, not a test's.
    public var isSanitizerHelper: Bool { name.contains("symbolizer") }

    /// Whether it runs (or ran) the same executable as this process, by
    /// name: swift-testing's exit-test children are the test runner itself,
    /// and its exit-test monitor reaps them.
    public var isTestRunnerCopy: Bool { name == Self.ownName }

    /// This process's own name, as its children's `name` would show it.
    private static let ownName = RelatedProcess(pid: getpid())?.name

    public var description: String { "\(pid) [\(state)] \(command)" }

    /// Reads `/proc/PID`; nil once the process is gone (or fully reaped).
    public init?(pid: pid_t) {
        guard let stat = readSmallFile("/proc/\(pid)/stat"),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        // "pid (name) S ppid ...": the name may hold spaces and parentheses.
        let name = String(stat[stat.index(after: open)..<close])
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count >= 2, let state = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
        let arguments = (readSmallFile("/proc/\(pid)/cmdline") ?? "")
            .split(separator: "\0").joined(separator: " ")
        self.pid = pid
        self.parent = parent
        self.state = state
        self.name = name
        self.command = arguments.isEmpty ? "[\(name)]" : arguments
    }
}
