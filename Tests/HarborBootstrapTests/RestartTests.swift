// Harbor — a name server restarted on the same socket gets its names back from their holders.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct RestartTests {
        /// P10: harbord is restarted (SIGTERM, and a new harbord on the same
        /// listening socket, as systemd's socket activation does). The names
        /// held by another process (`harbor hold`) and by this one are
        /// checked in again by their sessions, by themselves, within one
        /// second; rights looked up before the restart still reach the same
        /// ports; a declared name's holder gets it back too.
        @Test(.deadline(.seconds(60)))
        func P10_aRestartedNameServerHasItsNamesBackWithinOneSecond() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = SupervisedHarbord(policy: "declare restart.declared user=\(geteuid())\n")
                let client = try BootstrapClient(socketPath: harbord.socketPath, timeout: .seconds(10))
                let first = try #require(harbord.waitForHarbord(other: nil), "harbord did not start: \(harbord.child.stderrSoFar)")
                let holder = harbord.harbor(["hold", "restart.a", "restart.b"])
                #expect(holder.waitForStdout("holding 2 names"))
                let mine = try client.checkIn("restart.mine")
                let declared = try client.checkIn("restart.declared")
                let before = try client.lookUp("restart.a")
                let names = ["restart.a", "restart.b", "restart.declared", "restart.mine"]
                #expect(try client.list().map(\.name) == names)

                let restarted = ContinuousClock.now
                kill(first, SIGTERM)
                let second = try #require(harbord.waitForHarbord(other: first), "no new harbord on the same socket")
                var back: [String] = []
                while ContinuousClock.now - restarted < .seconds(5) {
                    back = (try? client.list().filter { $0.state != .waiting }.map(\.name)) ?? []
                    if back == names { break }
                    usleep(10_000)
                }
                let took = ContinuousClock.now - restarted
                #expect(back == names, "names back after the restart: \(back)")
                #expect(took < .seconds(1), "the names took \(took) to come back")
                #expect(second != first)

                // The ports are the ones their holders kept: old rights still work, new look-ups find them.
                try before.send(Message(id: 1, text: "through the old right"), timeout: .seconds(2))
                try client.lookUp("restart.mine").send(Message(id: 2, text: "after the restart"), timeout: .seconds(2))
                #expect(try mine.receive(timeout: .seconds(5)).text == "after the restart")
                try client.lookUp("restart.declared").send(Message(id: 3, text: "declared"), timeout: .seconds(2))
                #expect(try declared.receive(timeout: .seconds(5)).text == "declared")
                kill(holder.pid, SIGTERM)
                _ = holder.waitForExit()
                harbord.stop()
            }
        }

        /// P11: a message sent to a name during a restart waits in the new
        /// harbord until the holder's session checks the name in again; the
        /// session relays it into the holder's port keeping its sender (uid
        /// nobody, as the new harbord vouches), marked as relayed by that
        /// harbord, not passed off as the holder's own. The holder (`harbor
        /// watch`) is stopped across the restart, so the message surely
        /// waits for its re-check-in.
        @Test(.requiresRoot("to send as nobody"), .deadline(.seconds(60)))
        func P11_aMessageSentDuringARestartKeepsItsSenderWhenTheSessionRelaysIt() throws {
            let harbord = SupervisedHarbord(policy: "shared restart.shared owner=0\n")
            // Every user may connect, as harbord.socket's SocketMode=0666 allows.
            chmod(harbord.socketPath, 0o666)
            // The first connection starts harbord, as under systemd.
            let client = try BootstrapClient(socketPath: harbord.socketPath, timeout: .seconds(10))
            let first = try #require(harbord.waitForHarbord(other: nil), "harbord did not start: \(harbord.child.stderrSoFar)")
            let watcher = harbord.harbor(["watch", "restart.shared", "--count", "1", "--idle", "20"])
            #expect(watcher.waitForStdout("watching restart.shared"), "\(watcher.stderrSoFar)")
            kill(watcher.pid, SIGSTOP)
            kill(first, SIGTERM)
            let second = try #require(harbord.waitForHarbord(other: first), "no new harbord on the same socket")
            let sender = harbord.harbor(["send", "restart.shared", "during the restart"], asNobody: true)
            #expect(sender.exitCode() == 0, "\(sender.stderrSoFar)")
            kill(watcher.pid, SIGCONT)
            #expect(watcher.exitCode() == 0, "\(watcher.stderrSoFar)")
            let printed = watcher.allStdout()
            let line = printed.split(separator: "\n").first { $0.contains("during the restart") }.map(String.init) ?? ""
            #expect(line.contains("from pid \(sender.pid) uid 65534"), "the holder's view: \(printed)")
            #expect(line.contains("relayed by pid \(second) uid \(geteuid())"), "the holder's view: \(printed)")
            withExtendedLifetime(client) {}
            harbord.stop()
        }
    }
}

/// harbord restarted on one listening socket: `systemd-socket-activate`
/// holds the socket and runs a shell that starts harbord again whenever it
/// exits, passing the socket each time (LISTEN_FDS), as systemd does for
/// `harbord.socket`.
final class SupervisedHarbord {
    let directory = TemporaryDirectory(prefix: "harbor-bs")
    let socketPath: String
    let child: Child

    init(policy: String) {
        socketPath = directory.path + "/bootstrap.sock"
        let policyFile = directory.write("policy.conf", policy)
        let loop = "while :; do sh -c 'LISTEN_PID=$$ exec \"$0\" --foreground --policy \"$1\"' \"$0\" \"$1\"; sleep 0.05; done"
        child = Child(["/usr/bin/systemd-socket-activate", "--seqpacket", "-l", socketPath, "--fdname=bootstrap",
                       "/bin/sh", "-c", loop, builtExecutable("harbord"), policyFile],
                      environment: baseEnvironment())
        _ = child.waitForStderr("Listening on")
    }

    /// The running harbord's pid, once there is one other than `other`.
    func waitForHarbord(other: pid_t?, before deadline: ContinuousClock.Instant = .now + .seconds(10)) -> pid_t? {
        while ContinuousClock.now < deadline {
            for pid in children(of: child.pid) where pid != other && command(of: pid) == "harbord" { return pid }
            usleep(5_000)
        }
        return nil
    }

    /// Runs the `harbor` CLI against it (as `nobody`: a copy nobody can read).
    func harbor(_ arguments: [String], asNobody: Bool = false) -> Child {
        let executable = asNobody ? directory.copy(builtExecutable("harbor"), as: "harbor") : builtExecutable("harbor")
        let prefix = asNobody ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
        return Child(prefix + [executable] + arguments, environment: baseEnvironment() + ["HARBOR_BOOTSTRAP=\(socketPath)"])
    }

    /// Stops the loop, then harbord (SIGTERM; SIGKILL if it lingers).
    func stop() {
        let running = children(of: child.pid).filter { command(of: $0) == "harbord" }
        kill(child.pid, SIGKILL)
        _ = child.waitForExit()
        for pid in running { kill(pid, SIGTERM) }
        for pid in running {
            let deadline = ContinuousClock.now + .seconds(5)
            while isRunning(pid) && ContinuousClock.now < deadline { usleep(10_000) }
            if isRunning(pid) { kill(pid, SIGKILL) }
        }
    }

    /// Alive and not a zombie (an orphan is reaped by whoever adopts it).
    private func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    private func children(of pid: pid_t) -> [pid_t] {
        guard let text = readText("/proc/\(pid)/task/\(pid)/children") else { return [] }
        return text.split(separator: " ").compactMap { pid_t($0) }
    }

    private func command(of pid: pid_t) -> String? {
        readText("/proc/\(pid)/comm").map { String($0.prefix { $0 != "\n" }) }
    }

    private func readText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &bytes, bytes.count)
        return count >= 0 ? String(decoding: bytes[0..<count], as: UTF8.self) : nil
    }
}
