// Harbor — security tests: an ordinary service found by name. `harbor watch`,
// run by this process as root, holds a name the policy shares with every
// uid; it prints every message that reaches it, so a test can see who spoke
// into its port.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Synchronization
import HarborSystem

/// harbord with root's names (a ``HarbordVictim``) and `harbor watch`
/// holding the shared name ``name``; the victim measured is the watcher
/// or harbord (`measuring`). The honest client does the harbord victim's
/// work and pings the watcher through a look-up of its name.
final class WatchedServiceVictim: Victim, @unchecked Sendable {
    // @unchecked: `watcher` (reading its stdout) is used under `lock`; the
    // rest is Sendable or immutable.
    enum Measured { case service, harbord }

    /// The shared name the watcher holds (owner: root).
    static let name = "root.watched"

    let harbord: HarbordVictim
    let pid: pid_t
    let kind = "harbord"
    private let watcher: Child
    private let lock = HarborLock<Void>(())
    private let counter = Atomic<Int>(0)

    var adversaryArguments: [String] { harbord.adversaryArguments + ["--name", Self.name] }
    /// The watcher's pid.
    var servicePID: pid_t { watcher.pid }

    init(measuring measured: Measured) throws {
        harbord = try HarbordVictim(extraPolicy: "shared \(Self.name) owner=0\n")
        watcher = Child([builtExecutable("harbor"), "watch", Self.name, "--socket", harbord.socketPath],
                        environment: baseEnvironment())
        guard watcher.waitForStdout("watching \(Self.name)") else {
            throw SecurityTestError("harbor watch did not check in: \(watcher.stderrSoFar)")
        }
        pid = measured == .service ? watcher.pid : harbord.pid
    }

    deinit {
        kill(watcher.pid, SIGTERM)
        if watcher.waitForExit(before: .now + .seconds(5)) == nil {
            kill(watcher.pid, SIGKILL)
            watcher.waitForExit()
        }
    }

    func honestRequest() -> String? {
        if let wrong = harbord.honestRequest() { return wrong }
        let text = "honest ping \(counter.add(1, ordering: .relaxed).newValue)"
        do {
            let right = try harbord.client.lookUp(Self.name)
            let replies = ReceiveRight()
            var ping = Message(id: bootstrapPingID, text: text)
            ping.setReplyRight(replies.makeSendOnceRight())
            try right.send(ping, timeout: .seconds(5))
            let answer = try replies.receive(timeout: .seconds(5))
            guard answer.text == text else { return "the watcher answered \(answer.text.prefix(40).debugDescription)" }
        } catch {
            return "ping of \(Self.name) failed: \(error)"
        }
        _ = heard()  // keeps its output pipe drained
        return nil
    }

    /// Every line the watcher printed for a message so far ("id N from pid P uid U...").
    func heard() -> [Substring] {
        lock.withLock { _ in
            _ = watcher.waitFor("\u{0}", on: watcher.stdoutDescriptor, before: .now + .milliseconds(50))
            return watcher.stdoutSoFar.split(separator: "\n").filter { $0.hasPrefix("id ") }
        }
    }

    /// Lines of messages that reached the watcher from any process but this one.
    func strangers() -> [Substring] {
        heard().filter { !$0.contains(" from pid \(getpid()) ") }
    }

    func refusals() -> [String: Int]? { harbord.refusals() }

    func firstMessageForAdversary() -> Message { harbord.firstMessageForAdversary() }
}
