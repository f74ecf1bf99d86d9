// Harbor — security tests: the victims (an ordinary service, harbord) and
// an honest client of each in this process.
import CHarborLinux
import Glibc
import Harbor
import HarborBootstrap
import HarborPeerCommands
import HarborTestSupport
import Synchronization
import HarborSystem

/// A process under attack, with an honest client that must keep working.
protocol Victim: AnyObject, Sendable {
    var pid: pid_t { get }
    /// `--target` for the adversary.
    var kind: String { get }
    /// One honest request and its answer; nil if it went as it should,
    /// else what went wrong.
    func honestRequest() -> String?
    /// The victim's refusal counts (its `WireRejections`), by reason with
    /// dashes for spaces, and "refused" for the total; nil if it cannot tell.
    func refusals() -> [String: Int]?
    /// The first message for the adversary (a service's send right).
    func firstMessageForAdversary() -> Message
    /// Extra adversary arguments (harbord's socket).
    var adversaryArguments: [String] { get }
}

extension Victim {
    var isAlive: Bool { kill(pid, 0) == 0 && !isZombie }
    private var isZombie: Bool {
        guard let status = readSmallFile("/proc/\(pid)/stat"), let close = status.lastIndex(of: ")") else { return true }
        return status[status.index(after: close)...].hasPrefix(" Z")
    }
}

/// Names the adversary must never reach: root's.
enum RootNames {
    static let checkedIn = "root.secret"
    static let registered = "root.registered"
    /// Declared by the policy for uid 0: harbord holds its port until root checks it in.
    static let declared = "root.declared"
}

/// harbor-peer (Sources/harbor-peer/main.swift), started by this process as
/// root, serving its port; the honest client echoes.
final class ServiceVictim: Victim, @unchecked Sendable {
    // @unchecked: `process` is used only by init and deinit; the rest is Sendable.
    let pid: pid_t
    let port: SendRight
    private let process: ChildProcess
    private let counter = Atomic<Int>(0)
    let kind = "service"
    let adversaryArguments: [String] = []

    init() throws {
        let home = ReceiveRight()
        var first = Message(id: 0, text: "serve")
        first.attach(home.makeSendRight())
        let child = try ChildProcess.spawn(executable: builtExecutable("harbor-peer"), initialMessage: first)
        do {
            var hello = try home.receive(timeout: .seconds(30))
            port = try hello.takeSendRight(at: 0)
        } catch {
            reapChild(child.pid, patience: .zero)
            throw error
        }
        pid = child.pid
        process = child
    }

    deinit {
        try? port.send(Message(id: PeerCommand.exit), timeout: .seconds(2))
        reapChild(pid, patience: .seconds(2))
    }

    /// Sends `message` with a reply right to a fresh port and waits for the answer.
    func request(_ message: consuming Message, timeout: Duration = .seconds(5)) throws -> Message {
        let replies = ReceiveRight()
        message.setReplyRight(replies.makeSendOnceRight())
        try port.send(message, timeout: timeout)
        return try replies.receive(timeout: timeout)
    }

    func honestRequest() -> String? {
        let text = "honest \(counter.add(1, ordering: .relaxed).newValue)"
        do {
            let reply = try request(Message(id: PeerCommand.echo, text: text))
            return reply.text == text ? nil : "echo answered \(reply.text.prefix(40).debugDescription)"
        } catch {
            return "echo failed: \(error)"
        }
    }

    /// `key=value` words of the service's `stats` reply.
    func stats() -> [String: String]? {
        guard let reply = try? request(Message(id: PeerCommand.stats)) else { return nil }
        var result: [String: String] = [:]
        for word in reply.text.split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
        }
        return result
    }

    func refusals() -> [String: Int]? {
        stats()?.compactMapValues { Int($0) }.filter { $0.key != "limit" && $0.key != "queued" && $0.key != "senders" }
    }

    func firstMessageForAdversary() -> Message {
        var message = Message(id: 0, text: "victim")
        message.attach(port)
        return message
    }
}

/// A real harbord on a socket in a temporary directory, with root's names
/// checked in and registered by this process; the honest client connects
/// afresh, lists, looks the names up, sends to them, and watches what
/// reaches them.
final class HarbordVictim: Victim, @unchecked Sendable {
    // @unchecked: `child` (reading its stderr) is used under `lock`; the
    // rest is Sendable or immutable.
    let directory: TemporaryDirectory
    let socketPath: String
    let pid: pid_t
    let client: BootstrapClient
    let kind = "harbord"
    private let child: Child
    /// The `harbor` CLI, copied where uid 1000 can run it.
    private let harborCopy: String
    private let lock = HarborLock<Void>(())
    private let service: ReceiveRight
    private let registeredPort = ReceiveRight()
    private let counter = Atomic<Int>(0)
    /// Messages that reached root's services from anyone but this process.
    let strangers = Atomic<Int>(0)
    private let newProcessUID: uid_t
    private let checksIn: Bool

    var adversaryArguments: [String] { ["--socket", socketPath] }

    /// Starts harbord with a soft descriptor limit of `descriptorLimit`
    /// (systemd's default for a service), through `prlimit`, and
    /// `extraPolicy` lines after the declaration of root's name. The honest
    /// client's new processes run as `newProcessUID`; with `checksIn`, each
    /// honest request also checks a fresh name in (and lets it go).
    init(descriptorLimit: Int = 1024, extraArguments: [String] = [], extraPolicy: String = "",
         newProcessUID: uid_t = 1000, checksIn: Bool = false) throws {
        directory = TemporaryDirectory(prefix: "harbor-sec")
        socketPath = directory.path + "/bootstrap.sock"
        self.newProcessUID = newProcessUID
        self.checksIn = checksIn
        let policy = directory.write("policy.conf", "declare \(RootNames.declared) user=0\n" + extraPolicy)
        child = Child(["/usr/bin/prlimit", "--nofile=\(descriptorLimit):\(descriptorLimit)", builtExecutable("harbord"),
                       "--foreground", "--socket", socketPath, "--policy", policy] + extraArguments,
                      environment: baseEnvironment())
        pid = child.pid
        harborCopy = directory.copy(builtExecutable("harbor"), as: "harbor")
        guard child.waitForStderr("ready (") else { throw SecurityTestError("harbord did not start: \(child.stderrSoFar)") }
        client = try BootstrapClient(socketPath: socketPath)
        service = try client.checkIn(RootNames.checkedIn)
        try client.register(RootNames.registered, registeredPort.makeSendRight())
    }

    deinit {
        kill(pid, SIGTERM)
        if child.waitForExit(before: .now + .seconds(10)) == nil {
            kill(pid, SIGKILL)
            child.waitForExit()
        }
    }

    func honestRequest() -> String? {
        let number = counter.add(1, ordering: .relaxed).newValue
        // A process of a third uid starting now must get in too, not only
        // clients connected before (every third request: a process each).
        if number % 3 == 1, let wrong = newProcessLists() { return wrong }
        // Which request failed, and after how long.
        var step = "list"
        let began = ContinuousClock.now
        do {
            let names = try client.list().map(\.name)
            step = "lookups"
            guard names.contains(RootNames.checkedIn), names.contains(RootNames.registered) else {
                return "root's names are missing from the listing: \(names.prefix(5))"
            }
            if let wrong = try roundTrip(RootNames.checkedIn, service, number) { return wrong }
            if let wrong = try roundTrip(RootNames.registered, registeredPort, number) { return wrong }
            if checksIn {
                let fresh = try client.checkIn("root.fresh.\(number)")
                if let wrong = try roundTrip("root.fresh.\(number)", fresh, number) { return wrong }
            }
            return nil
        } catch {
            return "\(step): \(error) (after \(began.duration(to: .now)))"
        }
    }

    /// Runs `harbor list` as uid 1000 (a process and uid harbord has not
    /// seen yet; or `newProcessUID`); what went wrong, or nil.
    func newProcessLists() -> String? {
        let uid = newProcessUID
        let command = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", harborCopy, "list",
                       "--socket", socketPath, "--timeout", "5"]
        let child = Child(command, environment: baseEnvironment())
        guard let code = child.exitCode(before: .now + .seconds(10)) else {
            kill(child.pid, SIGKILL)
            return "harbor list as uid \(uid) did not finish"
        }
        guard code != 0 else { return nil }
        _ = child.waitForStderr("\u{0}never", before: .now + .seconds(1))  // read what it said, to EOF
        return "harbor list as uid \(uid) exited \(code): \(child.stderrSoFar.prefix(200))"
    }

    /// Looks `name` up, sends to it and receives on `port`; what went
    /// wrong, or nil.
    private func roundTrip(_ name: String, _ port: borrowing ReceiveRight, _ number: Int) throws -> String? {
        let right = try client.lookUp(name)
        try right.send(Message(id: 7, text: "honest \(number)"), timeout: .seconds(5))
        let received = try port.receive(timeout: .seconds(5))
        guard received.trailer.sender.pid == getpid() else {
            strangers.add(1, ordering: .relaxed)
            return "\(name) got a message from pid \(received.trailer.sender.pid): \(received.text.prefix(40))"
        }
        return nil
    }

    /// Drains root's services; counts messages from other processes.
    func drainStrangers() -> Int {
        drain(service)
        drain(registeredPort)
        return strangers.load(ordering: .relaxed)
    }

    private func drain(_ port: borrowing ReceiveRight) {
        while let message = port.tryReceive() {
            if message.trailer.sender.pid != getpid() { strangers.add(1, ordering: .relaxed) }
        }
    }

    /// The refusal counts harbord reports: the `key=value` words of the
    /// last log line with `refused=N` in it; nil if it never logged one.
    func refusals() -> [String: Int]? {
        lock.withLock { _ in
            _ = child.waitFor("\u{0}", on: child.stderrDescriptor, before: .now + .milliseconds(50))
            for line in child.stderrSoFar.split(separator: "\n").reversed() where line.contains("refused=") {
                var counts: [String: Int] = [:]
                for word in line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" }) {
                    let parts = word.split(separator: "=", maxSplits: 1)
                    if parts.count == 2, let count = Int(parts[1]) { counts[String(parts[0])] = count }
                }
                if counts["refused"] != nil { return counts }
            }
            return nil
        }
    }

    func firstMessageForAdversary() -> Message { Message(id: 0, text: "harbord") }

    var log: String { lock.withLock { _ in child.stderrSoFar } }
}

/// A failure to set a test up.
struct SecurityTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
