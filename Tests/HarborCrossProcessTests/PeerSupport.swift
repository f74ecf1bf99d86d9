// Harbor — starting and talking to the harbor-peer helper process.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing
import HarborSystem

/// A running peer and a send right to its port. One not reaped by `kill`,
/// `stop` or `waitForExit` (its test threw first) is killed when dropped, so
/// no peer outlives its test.
struct Peer: ~Copyable {
    let process: ChildProcess
    let port: SendRight
    private var reaped = false
    var pid: pid_t { process.pid }

    deinit {
        guard !reaped else { return }
        reapChild(process.pid, patience: .zero)
    }

    /// Starts a peer; its hello arrives on `home`. A peer whose hello does
    /// not come is killed and reaped before this throws.
    init(home: borrowing ReceiveRight) throws {
        var first = Message(id: 0, text: "serve")
        first.attach(home.makeSendRight())
        let child = try ChildProcess.spawn(executable: builtExecutable("harbor-peer"), initialMessage: first)
        do {
            var hello = try home.receive(timeout: .seconds(30))
            #expect(hello.id == PeerCommand.hello)
            #expect(hello.trailer.sender.pid == child.pid, "the trailer names the peer, as the kernel says")
            port = try hello.takeSendRight(at: 0)
        } catch {
            reapChild(child.pid, patience: .zero)
            throw error
        }
        process = child
    }

    /// Sends `message` and waits for the reply on a fresh port.
    func request(_ message: consuming Message, timeout: Duration = .seconds(30)) throws -> Message {
        let replies = ReceiveRight()
        message.setReplyRight(replies.makeSendOnceRight())
        try port.send(message)
        return try replies.receive(timeout: timeout)
    }

    /// Kills the peer (SIGKILL) and reaps it.
    consuming func kill() {
        process.kill(SIGKILL)
        _ = waitForExit()
    }

    /// Asks the peer to exit and reaps it (killed if it has not exited within 10 s).
    consuming func stop() {
        try? port.send(Message(id: PeerCommand.exit), timeout: .seconds(5))
        _ = waitForExit()
    }

    /// Waits for the peer to exit (told to, or killed) and reaps it: its
    /// wait status. One still running after `patience` is killed first.
    mutating func waitForExit(patience: Duration = .seconds(10)) -> CInt {
        reaped = true
        return reapChild(process.pid, patience: patience)
    }
}
