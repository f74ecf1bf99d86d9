// Harbor — S03: sd_notify readiness, status, watchdog cadence from the run loop, stopping; socket activation.
import Glibc
import HarborPorts
import HarborSystemd
import HarborTestSupport
import Testing

extension SystemdTests {
    @Suite struct NotifyTests {
        /// S03: a child run by a harness that owns NOTIFY_SOCKET sends
        /// READY=1 and STATUS= from its own pid, pings WATCHDOG=1 at half of
        /// WATCHDOG_USEC from its run loop, stops pinging while its loop is
        /// wedged, and says STOPPING=1 before exiting 0.
        @Test func S03_readinessStatusWatchdogAndStopping() throws {
            try expectNoDescriptorLeak {
                let harness = NotifyHarness()
                // The shim makes WATCHDOG_PID the child's own pid (exec keeps it).
                let child = Child(
                    ["/bin/sh", "-c", "WATCHDOG_PID=$$ exec \"$0\" notify --wedge-at 1200 --wedge-for 1500 --stop-at 3300", probePath()],
                    environment: baseEnvironment() + ["NOTIFY_SOCKET=\(harness.path)", "WATCHDOG_USEC=600000"],
                    captureOutput: false)
                let deadline = ContinuousClock.now + .seconds(15)
                var datagrams = harness.collect(before: deadline) { $0.assignments.contains("STOPPING=1") }
                let status = child.waitForExit(before: deadline)
                datagrams += harness.collect(before: .now + .milliseconds(100))
                #expect(status == 0, "child wait status \(String(describing: status))")

                let first = try #require(datagrams.first)
                #expect(first.assignments == ["READY=1", "STATUS=probe started"])
                for datagram in datagrams { #expect(datagram.pid == child.pid, "\(datagram.text) from pid \(datagram.pid)") }
                #expect(datagrams.contains { $0.assignments == ["STATUS=serving"] })
                #expect(datagrams.last?.assignments == ["STOPPING=1"])

                // Pings: one at once, then every 300 ms; none while wedged.
                let pings = datagrams.filter { $0.assignments == ["WATCHDOG=1"] }.map(\.ms)
                let start = first.ms
                let beforeWedge = pings.filter { $0 - start < 1150 }
                let afterWedge = pings.filter { $0 - start > 2800 }
                #expect(beforeWedge.count >= 3, "pings before the wedge: \(beforeWedge.map { $0 - start })")
                let gaps = zip(beforeWedge.dropFirst(), beforeWedge).map { $0 - $1 }
                #expect(gaps.allSatisfy { $0 >= 250 && $0 < 600 }, "gaps before the wedge: \(gaps)")
                #expect(!afterWedge.isEmpty, "pings did not resume after the wedge")
                let pingsDuringWedge = pings.filter { $0 - start > 1350 && $0 - start < 2600 }
                #expect(pingsDuringWedge.isEmpty, "pings while the loop was wedged: \(pingsDuringWedge.map { $0 - start })")
                let longest = zip(pings.dropFirst(), pings).map { $0 - $1 }.max() ?? 0
                #expect(longest >= 1200, "the wedge should leave a gap of about 1.5 s; longest gap \(longest) ms")
            }
        }

        /// S03: a WATCHDOG_PID naming another process means no watchdog here,
        /// and without NOTIFY_SOCKET every notification is a no-op.
        @Test func S03_watchdogForAnotherPidAndNoNotifySocket() throws {
            try expectNoDescriptorLeak {
                let harness = NotifyHarness()
                let child = Child(
                    [probePath(), "notify", "--stop-at", "700"],
                    environment: baseEnvironment() + ["NOTIFY_SOCKET=\(harness.path)", "WATCHDOG_USEC=200000", "WATCHDOG_PID=1"],
                    captureOutput: false)
                let deadline = ContinuousClock.now + .seconds(10)
                var datagrams = harness.collect(before: deadline) { $0.assignments.contains("STOPPING=1") }
                #expect(child.waitForExit(before: deadline) == 0)
                datagrams += harness.collect(before: .now + .milliseconds(50))
                #expect(datagrams.first?.assignments.first == "READY=1")
                #expect(!datagrams.contains { $0.assignments.contains("WATCHDOG=1") })
                // This test process has no NOTIFY_SOCKET: silent no-ops.
                let notifier = ServiceNotifier()
                #expect(!notifier.isSupervised)
                let sent = try notifier.ready()
                #expect(!sent)
                var refused = false
                do { try notifier.status("two\nlines") } catch SystemdError.Code.invalidArgument { refused = true }
                #expect(refused)
            }
        }

        /// S03: under the real `systemd-socket-activate`, the child gets the
        /// listening socket with its LISTEN_FDNAMES name, serves it from its
        /// run loop, and its READY=1 reaches the harness.
        @Test func S03_socketActivationUnderSystemdSocketActivate() {
            expectNoDescriptorLeak {
                let harness = NotifyHarness()
                let socketPath = harness.directory + "/api.sock"
                let child = Child(
                    ["/usr/bin/systemd-socket-activate", "-l", socketPath, "--fdname=harbor-api", "-E", "NOTIFY_SOCKET", probePath(), "activate"],
                    environment: baseEnvironment() + ["NOTIFY_SOCKET=\(harness.path)"], captureOutput: true)
                let deadline = ContinuousClock.now + .seconds(15)
                #expect(child.waitForStderr("Listening on", before: deadline))
                let reply = connectAndRead(socketPath)
                #expect(reply == "pong name=harbor-api fds=1 listening=1\n")
                var datagrams = harness.collect(before: deadline) { $0.assignments.contains("STOPPING=1") }
                #expect(child.waitForExit(before: deadline) == 0)
                datagrams += harness.collect(before: .now + .milliseconds(50))
                #expect(datagrams.first?.assignments == ["READY=1", "STATUS=listening on 1 socket(s)"])
                #expect(datagrams.allSatisfy { $0.pid == child.pid })
                unlink(socketPath)
            }
        }
    }
}

/// Connects to a Unix stream socket and reads until the peer closes.
private func connectAndRead(_ path: String) -> String? {
    let fd = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        _ = path.withCString { strncpy(raw.baseAddress!.assumingMemoryBound(to: CChar.self), $0, raw.count - 1) }
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else { return nil }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 256)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
