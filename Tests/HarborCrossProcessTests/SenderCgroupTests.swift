// Harbor — X22: a port that reads its senders' cgroups reads each through
// the pidfd the kernel took for the sender at send time (SCM_PIDFD), and
// closes that pidfd on every path.
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborPeerCommands
import HarborSystem
@testable import HarborTransport

/// Whether this kernel attaches SCM_PIDFD (Linux 6.5 and later).
let kernelPassesPidfds: Bool = {
    guard let (one, other) = try? SeqPacketSocket.makePair() else { return false }
    _ = other
    return (try? SeqPacketSocket.passSenderPidfds(one.rawValue)) ?? false
}()

/// Runs `/bin/sh -c script` with `socket` as its descriptor 3 and waits
/// for it (reaped: its pid is free once this returns).
func runWithSocket(_ socket: SharedDescriptor, _ script: String) -> CInt {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, socket.rawValue, 3)
    let arguments: [String] = ["/bin/sh", "-c", script]
    let argv = arguments.map { strdup($0) } + [nil]
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, nil)
    for pointer in argv { free(pointer) }
    posix_spawn_file_actions_destroy(&actions)
    guard spawned == 0 else { return -1 }
    var status: CInt = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return pid
}

@Suite(.serialized, .deadline(.seconds(120)))
struct SenderCgroupTests {
    /// X22: on a port that asked (before or after it had connections), a
    /// message from another process's socket carries its sender's cgroup,
    /// read at receipt; on a port that did not, none.
    @Test(.enabled(if: kernelPassesPidfds, "SO_PASSPIDFD needs Linux 6.5"))
    func X22_aPortThatAskedRecordsTheSendersCgroupAtReceipt() throws {
        let own = try ProcessCgroup.path(of: getpid())
        for asksFirst in [true, false] {
            let port = ReceiveRight()
            if asksFirst { port.readSenderCgroups() }
            let socket = try port.core.ensureTransport().makeConnection(.send)
            if !asksFirst { port.readSenderCgroups() }
            let raw = RawSender(socket)
            try raw.send(validPacket())
            let message = try port.receive(timeout: .seconds(5))
            #expect(message.trailer.sender == ProcessIdentity.current)
            #expect(message.trailer.senderCgroup == .success(own), "asked first: \(asksFirst)")
        }
        let plain = try RawConnection()
        try plain.send(validPacket())
        #expect(try plain.port.receive(timeout: .seconds(5)).trailer.senderCgroup == nil)
    }

    /// X22: a sender that sent, ended and was reaped before its message was
    /// read is reported ended (`ESRCH`), through the pidfd the kernel took
    /// when it sent: whatever process has its pid by then is never read.
    @Test(.enabled(if: kernelPassesPidfds, "SO_PASSPIDFD needs Linux 6.5"))
    func X22_aSenderThatEndedBeforeItsMessageWasReadIsReportedEnded() throws {
        let directory = TemporaryDirectory()
        let file = directory.path + "/packet"
        let packet = validPacket(id: 22)
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        let written = packet.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        try #require(written == packet.count)
        let port = ReceiveRight()
        port.readSenderCgroups()
        let socket = try port.core.ensureTransport().makeConnection(.send)
        let pid = runWithSocket(socket, "exec cat \(file) >&3")
        try #require(pid > 0)
        let message = try port.receive(timeout: .seconds(5))
        #expect(message.id == 22)
        #expect(message.trailer.sender.pid == pid)
        guard case .failure(let error)? = message.trailer.senderCgroup else {
            Issue.record("the ended sender's cgroup: \(String(describing: message.trailer.senderCgroup))")
            return
        }
        #expect(error.code == ESRCH, "\(error)")
    }

    /// X22: every SCM_PIDFD is closed once its packet is dealt with:
    /// messages received, packets refused, and a port that never asked
    /// though its socket attaches them.
    @Test(.enabled(if: kernelPassesPidfds, "SO_PASSPIDFD needs Linux 6.5"))
    func X22_noSenderPidfdOutlivesItsPacket() throws {
        try expectNoDescriptorLeak {
            let pidfdsBefore = openPidfdCount()
            let port = ReceiveRight()
            port.readSenderCgroups()
            let raw = RawSender(try port.core.ensureTransport().makeConnection(.send))
            // A port that never asked, its socket made to attach them anyway.
            let unasked = try RawConnection()
            let transport = try #require(unasked.port.core.portTransport)
            for socket in transport.table.withLockedValue({ $0.connections.values.map(\.socket) }) {
                #expect(try SeqPacketSocket.passSenderPidfds(socket.rawValue))
            }
            let packet = validPacket()
            for round in 0..<200 {
                try raw.send(packet)
                try raw.send(Array(packet.prefix(10)))  // refused: truncated
                try raw.send(withByte(packet, at: 0, 0xFF))  // refused: bad header
                try unasked.send(packet)
                #expect(try port.receive(timeout: .seconds(5)).trailer.senderCgroup != nil, "round \(round)")
                #expect(try unasked.port.receive(timeout: .seconds(5)).trailer.senderCgroup == nil)
            }
            let drained = nothingWaits(on: port)
            #expect(drained, "a refused packet was delivered")
            #expect(openPidfdCount() == pidfdsBefore)
        }
    }
}

extension SenderCgroupTests {
    /// X22: a receive right moved here from a process whose port read its
    /// senders' cgroups arrives with SO_PASSPIDFD on its connections; the
    /// import turns it off, so a port here that did not ask is not handed
    /// a pidfd with every packet (and one that asks turns it on again).
    @Test(.enabled(if: kernelPassesPidfds, "SO_PASSPIDFD needs Linux 6.5"))
    func X22_aReceiveRightMovedInStopsAttachingPidfdsUnlessThePortHereAsks() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            // The peer's port reads cgroups; the send-once right made for us
            // is a connection of that port with the option on.
            var made = try peer.request(Message(id: PeerCommand.keepNew, text: "cgroups"))
            let answer = try made.takeSendOnceRight(at: 0)
            var gave = try peer.request(Message(id: PeerCommand.giveKept))
            #expect(gave.text == "gave")
            let moved = try gave.takeReceiveRight(at: 0)
            let transport = try #require(moved.core.portTransport)
            let sockets = transport.table.withLockedValue { $0.connections.values.map(\.socket) }
            #expect(!sockets.isEmpty, "the send-once right's connection came with the port")
            for socket in sockets {
                #expect(!SeqPacketSocket.passesSenderPidfds(socket.rawValue), "the import left SO_PASSPIDFD on")
            }
            // Asking here turns it on again, for the moved connection too.
            moved.readSenderCgroups()
            for socket in sockets { #expect(SeqPacketSocket.passesSenderPidfds(socket.rawValue)) }
            try answer.send(Message(id: 7, text: "through the moved connection"))
            let message = try moved.receive(timeout: .seconds(5))
            #expect(message.text == "through the moved connection")
            #expect(message.trailer.senderCgroup == .success(try ProcessCgroup.path(of: getpid())))
            peer.stop()
        }
    }
}

/// Whether `port` hands out no message now.
func nothingWaits(on port: borrowing ReceiveRight) -> Bool {
    switch port.tryReceive() {
    case .some: false
    case .none: true
    }
}

/// The sending end of a connection, written to raw.
struct RawSender {
    let socket: SharedDescriptor

    init(_ socket: SharedDescriptor) { self.socket = socket }

    func send(_ bytes: [UInt8]) throws {
        let sent = try bytes.withUnsafeBytes { raw in
            try SeqPacketSocket.send(socket.rawValue, parts: [raw], descriptors: [])
        }
        #expect(sent)
    }
}
