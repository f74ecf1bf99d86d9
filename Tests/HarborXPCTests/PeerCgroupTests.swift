// HarborXPC tests — requirements on the peer's cgroup and systemd unit (X22).
import Glibc
import HarborBootstrap
import HarborSystem
import Synchronization
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

/// Two cgroups made at the root of the writable cgroup v2 hierarchy,
/// `BASE-okSUFFIX` and `BASE-noSUFFIX`, removed when this goes.
final class CgroupPair {
    let root: String
    let allowed: String
    let other: String

    init(_ base: String, suffix: String = "") throws {
        root = try #require(cgroupTwoRoot)
        allowed = "\(base)-ok\(suffix)"
        other = "\(base)-no\(suffix)"
        try FileSystem.makeDirectory(root + "/" + allowed)
        try FileSystem.makeDirectory(root + "/" + other)
    }

    deinit { for name in [allowed, other] { _ = rmdir(root + "/" + name) } }

    /// `command` run by a shell that first moves itself into `cgroup`.
    func start(_ command: String, in cgroup: String, environment: [String]) -> Child {
        Child(["/bin/sh", "-c", "echo $$ > \(root)/\(cgroup)/cgroup.procs && exec \(command)"], environment: environment)
    }
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
            try #require(ownCgroupPath() == "/", "the directories made at the hierarchy's root are named from it")
            let cgroups = try CgroupPair("harbor-x22-\(getpid())", suffix: ".service")
            let allowed = cgroups.allowed, other = cgroups.other

            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let probe = builtExecutable("harbor-xpc-probe")
            func call(_ name: String, from cgroup: String, _ n: Int) -> String {
                let child = cgroups.start("\(probe) call \(name) \(n)", in: cgroup, environment: harbord.clientEnvironment)
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
            withExtendedLifetime(cgroups) {}  // removed once no process is in them
        }

        /// X22: a client that asked for a session and ended (reaped) before
        /// the listener read its request, its pid then taken by a process in
        /// the allowed cgroup, is not admitted: the listener reads the cgroup
        /// through the pidfd the kernel took when the client sent, which
        /// shows it ended, never through the pid, which names the newcomer.
        @Test(.enabled(if: cgroupTwoRoot != nil && ownCgroupPath() == "/"
                       && access("/proc/sys/kernel/ns_last_pid", W_OK) == 0,
                       "needs root, a writable cgroup v2 hierarchy, to run in its root cgroup, and ns_last_pid"))
        func X22_aClientThatEndedIsRefusedThoughAProcessInTheAllowedCgroupTookItsPid() throws {
            let cgroups = try CgroupPair("harbor-x22r-\(getpid())")
            let allowed = cgroups.allowed, other = cgroups.other
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let probe = builtExecutable("harbor-xpc-probe")
            func start(_ command: String, in cgroup: String) -> Child {
                cgroups.start(command, in: cgroup, environment: harbord.clientEnvironment)
            }
            let name = "com.example.x22r"
            let entered = Atomic<Bool>(false), released = Atomic<Bool>(false)
            let admitted = Mutex<[pid_t]>([])
            let listener = try XPCListener(service: name, requirement: .isInCgroup("/" + allowed),
                                           bootstrap: bootstrap) { request in
                admitted.withLock { $0.append(request.peer.pid) }
                entered.store(true, ordering: .sequentiallyConsistent)
                let deadline = ContinuousClock.now + .seconds(30)
                while !released.load(ordering: .sequentiallyConsistent), .now < deadline { usleep(1000) }
                return request.accept { _ in Answer(n: 1, uid: 0, pid: 0, count: 0) }
            }
            defer { listener.cancel() }

            // The listener's thread waits in the handler of a first client...
            let first = start("\(probe) call \(name) 1", in: allowed)
            try #require(waitUntil { entered.load(ordering: .sequentiallyConsistent) } != nil, "the first client was not heard")
            // ...while a client in the other cgroup asks, gives up and is reaped,
            let gone = start("\(probe) connect \(name) 300", in: other)
            #expect(gone.allStdout().hasPrefix("error connectTimedOut"))
            _ = gone.waitForExit()
            // and a process in the allowed cgroup takes its pid.
            let taker = try #require(Self.takePid(gone.pid) { start("sleep 60", in: allowed) },
                                     "pid \(gone.pid) could not be taken again")
            try #require(waitUntil { readSmallFile("/proc/\(taker.pid)/cgroup")?.contains("0::/\(allowed)\n") == true } != nil)
            released.store(true, ordering: .sequentiallyConsistent)
            #expect(first.allStdout().hasPrefix("reply 1"))
            // A last client, answered after the listener read the request before it.
            let last = start("\(probe) call \(name) 3", in: allowed)
            #expect(last.allStdout().hasPrefix("reply 1"))
            let heard = admitted.withLock { $0 }
            #expect(heard.count == 2 && !heard.contains(gone.pid),
                    "admitted \(heard): pid \(gone.pid) is the ended client's, now another process's")
            kill(taker.pid, SIGKILL)
            _ = taker.waitForExit()
            withExtendedLifetime(cgroups) {}  // removed once no process is in them
        }

        /// X22, the session's side: a session requiring its service's
        /// cgroup refuses an answer whose sender ended (reaped) before the
        /// session read it, though a process in the allowed cgroup has
        /// taken its pid since: the session reads the cgroup through the
        /// pidfd the kernel took when the answer was sent, never by pid.
        /// (The client is stopped between its request and the answer.)
        @Test(.enabled(if: cgroupTwoRoot != nil && ownCgroupPath() == "/"
                       && access("/proc/sys/kernel/ns_last_pid", W_OK) == 0,
                       "needs root, a writable cgroup v2 hierarchy, to run in its root cgroup, and ns_last_pid"))
        func X22_aSessionRefusesAnAnswerFromAServiceThatEndedThoughAProcessInTheAllowedCgroupTookItsPid() throws {
            let cgroups = try CgroupPair("harbor-x22s-\(getpid())")
            let allowed = cgroups.allowed
            let harbord = PrivateHarbord()
            let probe = builtExecutable("harbor-xpc-probe")
            let go = "/tmp/harbor-x22s-go-\(getpid())"
            _ = unlink(go)
            defer { _ = unlink(go) }
            let name = "com.example.x22s"
            let service = cgroups.start("\(probe) accept-late \(name) \(go)", in: allowed,
                                        environment: harbord.clientEnvironment)
            try #require(service.waitForStdout("ready"))
            let client = Child([probe, "require-cgroup", name, "/" + allowed], environment: harbord.clientEnvironment)
            // The service holds the session request: the client waits for the answer. Stop it there,
            try #require(service.waitForStdout("holding"))
            kill(client.pid, SIGSTOP)
            // let the service answer and end,
            try #require(writeSmallFile(go, "go"))
            try #require(service.waitForExit() != nil, "the service did not end after answering")
            // and a process in the allowed cgroup take its pid before the client reads the answer.
            let taker = try #require(Self.takePid(service.pid) {
                cgroups.start("sleep 60", in: allowed, environment: harbord.clientEnvironment)
            }, "pid \(service.pid) could not be taken again")
            defer {
                kill(taker.pid, SIGKILL)
                _ = taker.waitForExit()
            }
            try #require(waitUntil { readSmallFile("/proc/\(taker.pid)/cgroup")?.contains("0::/\(allowed)\n") == true } != nil)
            kill(client.pid, SIGCONT)
            let said = client.allStdout()
            _ = client.waitForExit()
            #expect(said.hasPrefix("error peerIdentityUnavailable"),
                    "the answer of pid \(service.pid), ended, now another process's in \(allowed): \(said)")
            withExtendedLifetime(cgroups) {}  // removed once no process is in them
        }

        /// A child `spawn` made that has `pid` (written to `ns_last_pid`
        /// before each try; another process may take it first); nil if
        /// none did in 200 tries.
        static func takePid(_ pid: pid_t, _ spawn: () -> Child) -> Child? {
            for _ in 0..<200 {
                guard writeSmallFile("/proc/sys/kernel/ns_last_pid", "\(pid - 1)") else { return nil }
                let child = spawn()
                if child.pid == pid { return child }
            }
            return nil
        }

        /// X22: a listener that reads its peers' cgroups, answering some
        /// clients and refusing others, keeps none of their pidfds.
        @Test func X22_aListenerThatReadsCgroupsKeepsNoPidfd() throws {
            let own = try #require(ownCgroupPath(), "no cgroup v2 line in /proc/self/cgroup")
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let probe = builtExecutable("harbor-xpc-probe")
            let admitting = try XPCListener(service: "com.example.x22l", requirement: .isInCgroup(own),
                                            bootstrap: bootstrap) { $0.accept { _ in Answer(n: 1, uid: 0, pid: 0, count: 0) } }
            let refusing = try XPCListener(service: "com.example.x22m",
                                           requirement: .isInCgroup((own == "/" ? "" : own) + "/harbor-x22-elsewhere"),
                                           bootstrap: bootstrap) { $0.accept { _ in Answer(n: 1, uid: 0, pid: 0, count: 0) } }
            func call(_ name: String) -> String {
                let child = Child([probe, "call", name, "5"], environment: harbord.clientEnvironment)
                defer { _ = child.waitForExit() }
                return child.allStdout()
            }
            let before = openPidfdCount()
            for _ in 0..<8 {
                #expect(call("com.example.x22l").hasPrefix("reply 1"))
                #expect(call("com.example.x22m").hasPrefix("error peerRequirementNotMet"))
            }
            #expect(openPidfdCount() == before)
            admitting.cancel()
            refusing.cancel()
        }
    }
}
