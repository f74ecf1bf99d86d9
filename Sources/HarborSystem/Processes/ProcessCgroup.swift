// Harbor — the cgroup (v2) a process runs in, and the systemd unit that names it.
import CHarborLinux
import Glibc
import SystemPackage

/// The cgroup v2 path of another process, read so that a pid reused while
/// it is read cannot pass for the process asked about, and the systemd
/// unit the path names.
package enum ProcessCgroup {
    /// The cgroup v2 path of process `pid` (the `0::` line of
    /// `/proc/PID/cgroup`, relative to this process's cgroup namespace),
    /// for example `/system.slice/harbord.service`.
    ///
    /// Opens a pidfd on `pid` first and checks, after reading, that the
    /// process it names is still running: a pid that ended and was reused
    /// while the file was read is refused, never read as the new process's.
    /// C: `pidfd_open(2)`, `read(2)` of `/proc/PID/cgroup`, `poll(2)` on the pidfd.
    /// - Throws: `ESRCH` if the process has ended (before or while it was
    ///   read); the `open`/`read` error if `/proc` cannot be read; `ENODATA`
    ///   if the file has no cgroup v2 line (a cgroup v1 only system);
    ///   `EBADMSG` if it has more than one, or one that is no absolute path
    ///   (a cgroup name may hold a newline: such a file is not trusted).
    package static func path(of pid: pid_t) throws(SystemError) -> String {
        guard pid > 0 else { throw SystemError(Errno.noSuchProcess, call: "pidfd_open(\(pid))") }
        let pidfd = try ProcessControl.openDescriptor(pid)
        defer { DescriptorIO.close(pidfd) }
        return try path(of: pid, through: pidfd)
    }

    /// The cgroup v2 path of the process `pidfd` names, whose pid is `pid`
    /// (a pidfd the kernel took for a packet's sender, SCM_PIDFD, and the
    /// pid its SCM_CREDENTIALS carry: the two name one process). Read as
    /// ``path(of:)`` reads it, from `/proc/PID/cgroup`, checked afterwards
    /// through `pidfd`: a process that ended before or while it was read
    /// is refused, so a pid reused meanwhile is never read as its.
    /// `pidfd` stays open (the caller's).
    /// C: `read(2)` of `/proc/PID/cgroup`, `poll(2)` on the pidfd.
    /// - Throws: as ``path(of:)``; `ESRCH` also for pid 0 (a sender outside
    ///   this pid namespace, which has no path here).
    package static func path(of pid: pid_t, through pidfd: CInt) throws(SystemError) -> String {
        // Made only on refusal: this runs for every message such a port reads.
        func ended() -> SystemError {
            SystemError(Errno.noSuchProcess, call: "pidfd of \(pid) (it ended before or while its cgroup was read)")
        }
        // Pid 0: the kernel could not name the sender in this pid
        // namespace (it runs in one this process cannot see into).
        guard pid > 0 else {
            throw SystemError(Errno.noSuchProcess, call: "pidfd of pid \(pid) (a process outside this pid namespace)")
        }
        // One poll, after the read: a process that ended before it (its
        // file gone, or its pid another's) or during it is refused either way.
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.contents(of: "/proc/\(pid)/cgroup", readingAtMost: 65_536)
        } catch {
            throw isRunning(pidfd) ? error : ended()
        }
        guard isRunning(pidfd) else { throw ended() }
        let unified = String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("0::") }
        guard let line = unified.first else {
            throw SystemError(Errno.noData, call: "/proc/\(pid)/cgroup (no cgroup v2 line)")
        }
        let path = line.dropFirst(3)
        guard unified.count == 1, path.hasPrefix("/") else {
            throw SystemError(Errno.badMessage, call: "/proc/\(pid)/cgroup (not one absolute cgroup v2 path)")
        }
        return String(path)
    }

    /// The systemd unit a cgroup path names: its first component that ends
    /// in `.service` or `.scope` (`harbord.service` for
    /// `/system.slice/harbord.service/payload`); nil if none does.
    ///
    /// The first, not the last: below a unit that delegates its cgroup
    /// (`Delegate=yes`, and every user's manager, `user@UID.service`) the
    /// unit's own processes name the cgroups, so a deeper `x.service` may be
    /// anyone's choice; the first is where the system manager put the process.
    package static func unit(ofPath path: String) -> String? {
        path.split(separator: "/").first { $0.hasSuffix(".service") || $0.hasSuffix(".scope") }.map(String.init)
    }

    /// Whether the process a pidfd names has not ended (a pidfd polls
    /// readable once it has). C: `poll(2)`, timeout 0.
    private static func isRunning(_ pidfd: CInt) -> Bool {
        var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }
}
