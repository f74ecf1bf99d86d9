// Harbor — test support: executables built beside the tests, and child processes to drive them.
import CHarborLinux
import Glibc

/// An executable built beside the test runner (harbord, harbor).
public func builtExecutable(_ name: String) -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe = String(decoding: buffer[0..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/" + name
}

/// PATH and HOME of this process, for children, and the sanitizers' options
/// when set (Scripts/sanitizers.sh), so a child built with a sanitizer writes
/// its reports where the script looks for them.
public func baseEnvironment() -> [String] {
    ["PATH", "HOME", "TSAN_OPTIONS", "ASAN_OPTIONS", "LSAN_OPTIONS"].compactMap { name -> String? in
        guard let value = getenv(name) else { return nil }
        return "\(name)=\(String(cString: value))"
    }
}

/// A child process with an explicit environment; stdout and stderr can be captured.
public final class Child {
    /// The child's process id.
    public let pid: pid_t
    private let pidDescriptor: CInt
    /// Read ends of the child's stdout and stderr, or -1 when not captured.
    public let stdoutDescriptor: CInt
    public let stderrDescriptor: CInt
    /// The wait status, once the child was reaped.
    public private(set) var exitStatus: CInt?
    private var seen: [CInt: String] = [:]

    /// Starts `arguments[0]` (an absolute path) with exactly `environment`;
    /// with `captureOutput`, its stdout and stderr go to pipes this object reads.
    public init(_ arguments: [String], environment: [String], captureOutput: Bool = true) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        var out: [CInt] = [-1, -1]
        var err: [CInt] = [-1, -1]
        if captureOutput {
            _ = pipe(&out)
            _ = pipe(&err)
            for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, out[1], 1)
            posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        }
        // Nothing else of the test runner's (its own output pipe, a
        // descriptor another thread has not marked close-on-exec yet): a
        // child that outlives its test must not keep `swift test` waiting.
        _ = charbor_spawn_addclosefrom(&actions, 3)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        var child: pid_t = 0
        let spawned = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        precondition(spawned == 0, "posix_spawn \(arguments[0]) failed: \(spawned)")
        for pointer in argv + envp { free(pointer) }
        posix_spawn_file_actions_destroy(&actions)
        if captureOutput {
            close(out[1])
            close(err[1])
        }
        stdoutDescriptor = out[0]
        stderrDescriptor = err[0]
        pid = child
        pidDescriptor = charbor_pidfd_open(child, 0)
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            waitForExit(before: .now + .seconds(5))
        }
        close(pidDescriptor)
        if stdoutDescriptor >= 0 { close(stdoutDescriptor) }
        if stderrDescriptor >= 0 { close(stderrDescriptor) }
    }

    /// Waits on its pidfd for the child to exit; the wait status, or nil at the deadline.
    @discardableResult
    public func waitForExit(before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> CInt? {
        if let exitStatus { return exitStatus }
        var probe = pollfd(fd: pidDescriptor, events: Int16(POLLIN), revents: 0)
        let ms = max(0, Int32(ContinuousClock.now.duration(to: deadline) / .milliseconds(1)))
        guard poll(&probe, 1, ms) > 0 else { return nil }
        var status: CInt = 0
        waitpid(pid, &status, 0)
        exitStatus = status
        return status
    }

    /// The exit code (nil if killed by a signal or still running at the deadline).
    public func exitCode(before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> Int32? {
        guard let status = waitForExit(before: deadline), status & 0x7f == 0 else { return nil }
        return (status >> 8) & 0xff
    }

    /// Reads `descriptor` until `text` shows up (true) or EOF/the deadline (false).
    public func waitFor(_ text: String, on descriptor: CInt, before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> Bool {
        while !(seen[descriptor, default: ""].contains(text)) {
            var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ms = max(0, Int32(ContinuousClock.now.duration(to: deadline) / .milliseconds(1)))
            guard poll(&probe, 1, ms) > 0 else { return false }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { return false }
            seen[descriptor, default: ""] += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        return true
    }

    /// Reads stdout until `text` shows up (true) or EOF/the deadline (false).
    public func waitForStdout(_ text: String, before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> Bool {
        waitFor(text, on: stdoutDescriptor, before: deadline)
    }

    /// Reads stderr until `text` shows up (true) or EOF/the deadline (false).
    public func waitForStderr(_ text: String, before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> Bool {
        waitFor(text, on: stderrDescriptor, before: deadline)
    }

    /// Everything on stdout until EOF (call after the child exited).
    public func allStdout() -> String {
        _ = waitFor("\u{0}never", on: stdoutDescriptor, before: .now + .seconds(5))
        return seen[stdoutDescriptor, default: ""]
    }

    /// What stderr said so far (for failure messages).
    public var stderrSoFar: String { seen[stderrDescriptor, default: ""] }

    /// What stdout said so far, as far as `waitFor` read it.
    public var stdoutSoFar: String { seen[stdoutDescriptor, default: ""] }
}
