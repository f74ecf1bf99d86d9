// Harbor — processes: pidfds, signals, reaping, spawning, and who we are.
import CHarborLinux
import Glibc

/// How a reaped process ended, as `waitid` reported it.
package enum ProcessEnding: Hashable, Sendable {
    /// It exited with this code.
    case exited(code: CInt)
    /// A signal killed it (`coreDumped` if it left a core).
    case killed(signal: CInt, coreDumped: Bool)
    /// Not reaped: not this process's child, reaped by someone else, or
    /// not ended yet.
    case unavailable
}

/// Calls on processes: the calling one, and others through pidfds, which
/// name a process itself rather than its (reusable) number.
package enum ProcessControl {
    /// The calling process's id. C: `getpid`.
    package static var processID: pid_t { getpid() }

    /// The calling process's effective user id. C: `geteuid`.
    package static var effectiveUserID: uid_t { geteuid() }

    /// A pidfd for `pid`, close-on-exec. C: `pidfd_open(2)` (Linux 5.3).
    /// - Throws: ESRCH if no such process exists.
    package static func openDescriptor(_ pid: pid_t) throws(SystemError) -> CInt {
        try systemCall("pidfd_open") { charbor_pidfd_open(pid, 0) }
    }

    /// Sends `signal` through a pidfd. C: `pidfd_send_signal(2)`.
    /// - Throws: ESRCH once the process has ended and been reaped.
    package static func sendSignal(_ signal: CInt, through pidfd: CInt) throws(SystemError) {
        _ = try systemCall("pidfd_send_signal") { charbor_pidfd_send_signal(pidfd, signal) }
    }

    /// Sends `signal` to `pid` by number. C: `kill(2)`.
    package static func sendSignal(_ signal: CInt, to pid: pid_t) throws(SystemError) {
        _ = try systemCall("kill") { kill(pid, signal) }
    }

    /// Whether a process numbered `pid` exists (a zombie does). C: `kill(pid, 0)`.
    package static func exists(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || charbor_errno() != ESRCH
    }

    /// Reaps the child a pidfd names and says how it ended; with `wait`
    /// false, returns ``ProcessEnding/unavailable`` at once for a child
    /// still running. C: `waitid(P_PIDFD, WEXITED)`, retried on EINTR.
    package static func reap(pidfd: CInt, wait: Bool = true) -> ProcessEnding {
        var reapedPID: pid_t = 0
        var code: CInt = 0
        var status: CInt = 0
        var result: CInt
        repeat {
            result = charbor_pidfd_wait(pidfd, WEXITED | (wait ? 0 : WNOHANG), &reapedPID, &code, &status)
        } while result < 0 && charbor_errno() == EINTR
        guard result == 0, reapedPID != 0 else { return .unavailable }
        if code == charbor_CLD_EXITED { return .exited(code: status) }
        return .killed(signal: status, coreDumped: code == charbor_CLD_DUMPED)
    }

    /// Waits for child `pid` to exit and returns its raw wait status.
    /// C: `waitpid(pid, 0)`, retried on EINTR.
    package static func waitForExit(_ pid: pid_t) -> CInt {
        var status: CInt = 0
        while waitpid(pid, &status, 0) == -1 && charbor_errno() == EINTR {}
        return status
    }

    /// Reaps child `pid` if it has exited, without waiting: its raw wait
    /// status; 0 if it is no child to wait for (ECHILD: reaped already);
    /// nil while it runs. C: `waitpid(WNOHANG)`.
    package static func reapIfExited(_ pid: pid_t) -> CInt? {
        var status: CInt = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { return status }
        return reaped < 0 && charbor_errno() == ECHILD ? 0 : nil
    }

    /// Whether a raw wait status says the process exited with code 0.
    package static func exitedCleanly(_ status: CInt) -> Bool {
        status & 0x7f == 0 && (status >> 8) & 0xff == 0
    }

    /// Starts `executable` with `arguments` (argv[0] included) and
    /// `environment`; with `inherit`, the child gets descriptor
    /// `inherit.descriptor` as number `inherit.as` (without close-on-exec).
    /// The child keeps stdin, stdout and stderr as they are here, the
    /// descriptors in `keeping` (open here without close-on-exec, under the
    /// same numbers) and no other descriptor of this process: one opened
    /// without close-on-exec (by a library, or by another thread between its
    /// `open` and `fcntl`) would otherwise live on in the child, a test
    /// runner's output pipe kept open by a child that outlives its test, say.
    /// `searchPath` looks a bare name up in PATH. C: `posix_spawn(p)`.
    /// - Returns: the child's pid.
    package static func spawn(
        _ executable: String, arguments: [String], environment: [String],
        inherit: (descriptor: CInt, as: CInt)? = nil, keeping: [CInt] = [], searchPath: Bool = false
    ) throws(SystemError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var passed = Set(keeping)
        // A descriptor already at its target number would be dup2'd onto
        // itself, which keeps close-on-exec (glibc before 2.29): pass a
        // close-on-exec duplicate instead, closed here once the child runs.
        var duplicate: CInt = -1
        defer { if duplicate >= 0 { close(duplicate) } }
        if let inherit {
            var source = inherit.descriptor
            if source == inherit.as {
                duplicate = fcntl(source, F_DUPFD_CLOEXEC, CInt(3))
                guard duplicate >= 0 else { throw SystemError(errno: errno, call: "fcntl(F_DUPFD_CLOEXEC)") }
                source = duplicate
            }
            posix_spawn_file_actions_adddup2(&actions, source, inherit.as)
            passed.insert(inherit.as)
        }
        // closefrom cannot skip a number: close each one up to the highest
        // passed on (a number not open there is no error, in glibc), then
        // everything above. Without glibc's closefrom (before 2.34) the child
        // inherits what it did before.
        let highest = passed.max() ?? 2
        for number in 3..<max(3, highest) where !passed.contains(number) {
            posix_spawn_file_actions_addclose(&actions, number)
        }
        _ = charbor_spawn_addclosefrom(&actions, max(3, highest + 1))
        var pid: pid_t = 0
        let status = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in
                searchPath
                    ? posix_spawnp(&pid, executable, &actions, nil, argv, envp)
                    : posix_spawn(&pid, executable, &actions, nil, argv, envp)
            }
        }
        guard status == 0 else { throw SystemError(errno: status, call: searchPath ? "posix_spawnp" : "posix_spawn") }
        return pid
    }

    /// The process environment, as `NAME=value` strings.
    package static var environment: [String] {
        var result: [String] = []
        guard var pointer = charbor_environ() else { return result }
        while let entry = pointer.pointee {
            result.append(String(cString: entry))
            pointer += 1
        }
        return result
    }

    /// The value of environment variable `name`; nil if unset. C: `getenv`.
    package static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Removes environment variable `name`. C: `unsetenv`.
    package static func unsetEnvironmentValue(_ name: String) { unsetenv(name) }

    private static func withCStrings<Result>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result
    ) -> Result {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }
}
