// Harbor — starting and talking to the harbor-peer helper process.
import Glibc
import Harbor
import HarborTestSupport
import Testing
import HarborSystem

/// The harbor-peer executable, built beside the test runner.
func peerExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let path = String(decoding: buffer[0..<max(0, length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var directory = path
    while let last = directory.last, last != "/" { directory.removeLast() }
    return directory + "harbor-peer"
}

/// The message ids harbor-peer serves (Sources/harbor-peer/main.swift).
enum PeerCommand {
    static let hello: Int32 = 100
    static let echo: Int32 = 1
    static let forward: Int32 = 2
    static let use: Int32 = 3
    static let used: Int32 = 4
    static let drain: Int32 = 5
    static let stall: Int32 = 6
    static let hold: Int32 = 7
    static let region: Int32 = 8
    static let exit: Int32 = 9
    static let useHeld: Int32 = 10
    static let keep: Int32 = 11
    static let receiveKept: Int32 = 12
    static let drainTrailers: Int32 = 13
    static let keepNew: Int32 = 14
    static let burst: Int32 = 15
}

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
        process.kill(SIGKILL)
        _ = ProcessControl.waitForExit(process.pid)
    }

    /// Starts a peer; its hello arrives on `home`.
    init(home: borrowing ReceiveRight) throws {
        var first = Message(id: 0, text: "serve")
        first.attach(home.makeSendRight())
        let child = try ChildProcess.spawn(executable: peerExecutable(), initialMessage: first)
        var hello = try home.receive(timeout: .seconds(30))
        #expect(hello.id == PeerCommand.hello)
        #expect(hello.trailer.sender.pid == child.pid, "the trailer names the peer, as the kernel says")
        port = try hello.takeSendRight(at: 0)
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

    /// Asks the peer to exit and reaps it.
    consuming func stop() {
        try? port.send(Message(id: PeerCommand.exit), timeout: .seconds(5))
        _ = waitForExit()
    }

    /// Waits for the peer to exit (told to, or killed) and reaps it: its wait status.
    mutating func waitForExit() -> CInt {
        reaped = true
        return ProcessControl.waitForExit(process.pid)
    }
}
