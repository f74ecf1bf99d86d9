// HarborXPC tests — requirements on the peer's cgroup and systemd unit (X22).
import Glibc
import HarborBootstrap
import HarborSystem
import HarborTestSupport
@testable import HarborXPC
import Testing

/// The writable cgroup v2 hierarchy: `/sys/fs/cgroup` (unified) or
/// `/sys/fs/cgroup/unified` (hybrid); nil without one root can write.
let cgroupTwoRoot: String? = {
    guard runsAsRoot else { return nil }
    for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
    where access(root + "/cgroup.procs", F_OK) == 0 && access(root, W_OK) == 0 {
        return root
    }
    return nil
}()

/// This process's cgroup v2 path, as the tests read it themselves.
func ownCgroupPath() -> String? {
    guard let file = fopen("/proc/self/cgroup", "r") else { return nil }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 4096)
    while fgets(&buffer, Int32(buffer.count), file) != nil {
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if line.hasPrefix("0::") { return String(line.dropFirst(3).dropLast(line.hasSuffix("\n") ? 1 : 0)) }
    }
    return nil
}

extension XPCTests {
    @Suite struct PeerCgroups {
        /// X22: a listener's cgroup requirement admits a peer in that cgroup
        /// (this process: its own cgroup, read independently) and refuses one
        /// that is not, with `peerRequirementNotMet`; a unit requirement
        /// refuses a peer whose cgroup names no such unit.
        @Test func X22_aCgroupRequirementAdmitsThePeersCgroupAndRefusesAnother() throws {
            let own = try #require(ownCgroupPath(), "no cgroup v2 line in /proc/self/cgroup")
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let admitting = try XPCListener(service: "com.example.x22a", requirement: .isInCgroup(own),
                                            bootstrap: bootstrap) { $0.accept { _ in Answer(n: 1, uid: 0, pid: 0, count: 0) } }
            let session = try XPCSession(machService: "com.example.x22a", bootstrap: bootstrap)
            #expect(try session.sendSync(Ask(op: "echo", n: 1)).decode(as: Answer.self).n == 1)
            session.cancel(reason: "done")
            admitting.cancel()

            let elsewhere = (own == "/" ? "" : own) + "/harbor-x22-elsewhere"
            for (index, requirement) in [XPCPeerRequirement.isInCgroup(elsewhere), .isInCgroup(own + "x"),
                                         .isInSystemdUnit("harbor-x22-none.service")].enumerated() {
                let name = "com.example.x22b\(index)"
                let refusing = try XPCListener(service: name, requirement: requirement,
                                               bootstrap: bootstrap) { $0.accept { _ in Answer(n: 1, uid: 0, pid: 0, count: 0) } }
                #expect(xpcCode { _ = try XPCSession(machService: name, bootstrap: bootstrap) }
                        == .peerRequirementNotMet, "\(requirement) admitted a peer in \(own)")
                refusing.cancel()
            }
        }

        /// X22: a peer whose cgroup cannot be read (it has ended: its pid
        /// names no process) is refused with `peerIdentityUnavailable`,
        /// unless the rest of the requirement decides without it; the unit
        /// is the first `.service` / `.scope` of the path.
        @Test func X22_anUnknownCgroupIsATypedRefusalAndTheUnitIsTheFirstOfThePath() throws {
            let child = Child(["/bin/true"], environment: [])
            _ = child.waitForExit()
            let gone = ProcessIdentity(pid: child.pid, uid: getuid(), gid: getgid())
            let error = #expect(throws: XPCRichError.self) { try XPCPeerRequirement.isInCgroup("/").check(gone) }
            #expect(error?.code == .peerIdentityUnavailable, "\(String(describing: error))")
            #expect(!XPCPeerRequirement.isInSystemdUnit("x.service").isSatisfied(by: gone))
            #expect(XPCPeerRequirement.anyOf([.isFromSameUser(), .isInCgroup("/x")]).isSatisfied(by: gone),
                    "the uid alone decides an anyOf")
            let notMet = #expect(throws: XPCRichError.self) {
                try XPCPeerRequirement.allOf([.hasUserID(getuid() &+ 1), .isInCgroup("/x")]).check(gone)
            }
            #expect(notMet?.code == .peerRequirementNotMet, "a uid that fails decides an allOf")

            #expect(ProcessCgroup.unit(ofPath: "/system.slice/harbord.service") == "harbord.service")
            #expect(ProcessCgroup.unit(ofPath: "/system.slice/box.service/payload/fake.service") == "box.service")
            #expect(ProcessCgroup.unit(ofPath: "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service")
                    == "user@1000.service")
            #expect(ProcessCgroup.unit(ofPath: "/user.slice/user-1000.slice/session-3.scope") == "session-3.scope")
            #expect(ProcessCgroup.unit(ofPath: "/") == nil)
        }

        /// X22: two clients in other processes, one moved into the allowed
        /// cgroup and one into another before they connect: the first is
        /// answered, the second refused with `peerRequirementNotMet`; a
        /// requirement on the unit the cgroup names admits the first too.
        @Test(.enabled(if: cgroupTwoRoot != nil && ownCgroupPath() == "/",
                       "needs root, a writable cgroup v2 hierarchy, and to run in its root cgroup"))
        func X22_aClientInAnotherCgroupIsRefusedAndOneInTheAllowedIsAnswered() throws {
            let root = try #require(cgroupTwoRoot)
            try #require(ownCgroupPath() == "/", "the directories made at the hierarchy's root are named from it")
            let base = "harbor-x22-\(getpid())"
            let allowed = "\(base)-ok.service", other = "\(base)-no.service"
            for name in [allowed, other] { try FileSystem.makeDirectory(root + "/" + name) }
            defer { for name in [allowed, other] { _ = rmdir(root + "/" + name) } }

            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let probe = builtExecutable("harbor-xpc-probe")
            func call(_ name: String, from cgroup: String, _ n: Int) -> String {
                let script = "echo $$ > \(root)/\(cgroup)/cgroup.procs && exec \(probe) call \(name) \(n)"
                let child = Child(["/bin/sh", "-c", script], environment: harbord.clientEnvironment)
                let said = child.allStdout()
                _ = child.waitForExit()
                return said
            }
            for (index, requirement) in [XPCPeerRequirement.isInCgroup("/" + allowed), .isInSystemdUnit(allowed)].enumerated() {
                let name = "com.example.x22c\(index)"
                let listener = try XPCListener(service: name, requirement: requirement,
                                               bootstrap: bootstrap) { request in
                    request.accept { message in
                        let ask = try? message.decode(as: Ask.self)
                        return Answer(n: ask?.n ?? -1, uid: message.sender.uid, pid: message.sender.pid, count: 0)
                    }
                }
                let admitted = call(name, from: allowed, 7)
                #expect(admitted.hasPrefix("reply 7"), "\(requirement): the client in \(allowed): \(admitted)")
                let refused = call(name, from: other, 8)
                #expect(refused.hasPrefix("error peerRequirementNotMet"), "\(requirement): the client in \(other): \(refused)")
                listener.cancel()
            }
        }
    }
}
