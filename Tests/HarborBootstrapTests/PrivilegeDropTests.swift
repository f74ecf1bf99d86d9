// Harbor — whoever relays is seen (issue 21): harbord started as root gives up root, so what it relays
// never passes for root (P11).
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite(.deadline(.seconds(120))) struct PrivilegeDropTests {
        /// P11: harbord started by hand as root (no service manager) binds
        /// its socket, then runs as an unprivileged user: every uid of its
        /// `/proc/PID/status` is non-zero. A message sent by root to a
        /// declared name before its service checks in waits in harbord; the
        /// service receives it with root as sender and harbord as relay,
        /// whose uid (the kernel's word) is not 0.
        @Test(.requiresRoot("the drop happens only when harbord starts as root")) func P11_harbordStartedAsRootRelaysAsAnUnprivilegedUser() throws {
            let harbord = HarbordProcess(policy: "declare early user=0\n")
            #expect(harbord.waitUntilReady())
            let uids = try #require(procStatusIDs("Uid:", of: harbord.child.pid))
            #expect(uids.count == 4 && uids.allSatisfy { $0 != 0 }, "harbord's uids after start-up: \(uids)")
            #expect(!uids.contains(65534), "harbord shares nobody's uid (and its per-user limits): \(uids)")
            #expect(harbord.child.waitForStderr("gave up root after binding the socket"), "\(harbord.child.stderrSoFar)")
            let early = harbord.harbor(["send", "early", "from root"])
            #expect(early.exitCode() == 0, "\(early.stderrSoFar)")
            let client = try harbord.client()
            let inbox = try client.checkIn("early")
            let message = try inbox.receive(timeout: .seconds(10))
            #expect(message.text == "from root")
            #expect(message.trailer.sender.uid == 0, "the real sender: \(message.trailer.sender)")
            let relay = try #require(message.trailer.relayedBy, "the message waited in harbord")
            #expect(relay.pid == harbord.child.pid)
            #expect(relay.uid != 0, "harbord relayed it as root: \(relay)")
            #expect(RelayTrust.trusts(relay))
            #expect(harbord.stop() == 0)
        }

        /// P11: `--user root` keeps root on purpose (and says so); an
        /// unknown user is a start-up error (exit 77), not a silent root.
        @Test(.requiresRoot("the test starts harbord as root")) func P11_userRootKeepsRootAndAnUnknownUserStopsStartUp() throws {
            let root = HarbordProcess(extraArguments: ["--user", "root"])
            #expect(root.waitUntilReady())
            #expect(root.child.waitForStderr("running as root (--user root)"))
            #expect(procStatusIDs("Uid:", of: root.child.pid) == [0, 0, 0, 0])
            #expect(root.stop() == 0)
            let unknown = HarbordProcess(extraArguments: ["--user", "harbor-no-such-user"])
            #expect(unknown.child.exitCode() == 77)
            #expect(unknown.child.waitForStderr("--user harbor-no-such-user: no such user"))
        }
    }
}

/// The numbers of the line of `/proc/PID/status` starting with `key`
/// (`Uid:`: real, effective, saved, file-system uid); nil if unreadable.
func procStatusIDs(_ key: String, of pid: pid_t) -> [UInt32]? {
    guard let file = fopen("/proc/\(pid)/status", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, CInt(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard text.hasPrefix(key) else { continue }
        return text.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { UInt32($0) }
    }
    return nil
}
