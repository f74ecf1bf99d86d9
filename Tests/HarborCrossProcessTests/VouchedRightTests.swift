// Harbor — P11: a send right's slot counter as a name server vouches for
// it. From the name server this process trusts (RelayTrust), the vouch is
// taken instead of asking the kernel (no fstat of the counter, no SO_TYPE
// of the connection); from anyone else it is read and ignored.
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

@Suite(.serialized, .deadline(.seconds(120)))
struct VouchedRightTests {
    /// A send right to a port nobody here knows, on a fresh connection and
    /// counter, whose entry vouches for `vouch` (true or not).
    private func vouchedRight(
        _ identity: PortIdentity, connection: SharedDescriptor, counter: SharedSlots, vouch: FileKey
    ) throws -> ExportedRight {
        guard let word = SlotCounterVouch(vouch) else {
            throw PortError(.invalidArgument, "a memfd's device or inode past 32 bits: \(vouch)")
        }
        return ExportedRight(kind: .send, identity: identity, descriptors: [connection, counter.descriptor], vouch: word)
    }

    /// A connected `SOCK_STREAM` pair: not a packet socket.
    private func streamPair() throws -> (SharedDescriptor, SharedDescriptor) {
        var ends: [CInt] = [-1, -1]
        try #require(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        return (SharedDescriptor(taking: ends[0]), SharedDescriptor(taking: ends[1]))
    }

    /// Which of two counter files the registry knows `identity` by (its
    /// connection made here, by this process).
    private func registeredFile(_ identity: PortIdentity, _ files: [FileKey]) throws -> FileKey? {
        try files.first { file in
            try PortRegistry.lookUp(PortRegistry.Key(identity), slots: file) { () throws(SystemError) -> Int32 in
                getpid()
            }.port != nil
        }
    }

    /// What one vouched right leaves behind: the right as received, the
    /// other end of its connection, and the counter's real file beside the
    /// (false) one vouched for, whose holder is kept here.
    private struct Arrival {
        let received: SendRight
        let sink: SharedDescriptor
        let real: FileKey
        let vouched: FileKey
        let vouchedHolder: SharedSlots
    }

    /// Sends `raw`'s port a right to a port nobody here knows whose entry
    /// vouches for another counter's file than its own, and takes it.
    private func sendFalselyVouched(_ identity: PortIdentity, on raw: RawConnection) throws -> Arrival {
        let (sink, sending) = try SeqPacketSocket.makePair()
        let counter = try SharedSlots(free: 4)
        let other = try SharedSlots(free: 1)
        let vouched = try FileKey(of: other.descriptor.rawValue)
        try sendForged(vouchedRight(identity, connection: sending, counter: counter, vouch: vouched), on: raw.socket)
        var carrier = try raw.port.receive(timeout: .seconds(5))
        return Arrival(received: try carrier.takeSendRight(at: 0), sink: sink,
                       real: try FileKey(of: counter.descriptor.rawValue), vouched: vouched, vouchedHolder: other)
    }

    @Test func P11_aSendRightFromTheTrustedNameServerIsTakenOnItsWord() throws {
        // The test's own process stands for the name server: the kernel
        // names it as the packet's sender, and this process trusts it.
        RelayTrust.trust(.current)
        defer { RelayTrust.revoke(.current) }
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            // A vouch that is not the counter's file: believed, so the port
            // is registered by it. The kernel was not asked.
            let identity = PortIdentity(origin: 0x0c0f_fee0, number: 11)
            let arrival = try sendFalselyVouched(identity, on: raw)
            #expect(try registeredFile(identity, [arrival.real, arrival.vouched]) == arrival.vouched,
                    "the name server's word, not fstat's")
            try arrival.received.send(Message(id: 1, text: "through the vouched right"), timeout: .zero)
            var buffer = [UInt8](repeating: 0, count: 256)
            #expect(recv(arrival.sink.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0)

            // Its word covers the connection too: no SO_TYPE asked.
            let (streamSink, stream) = try streamPair()
            let streamIdentity = PortIdentity(origin: 0x0c0f_fee0, number: 12)
            try sendForged(vouchedRight(streamIdentity, connection: stream, counter: try SharedSlots(free: 1),
                                        vouch: arrival.vouched), on: raw.socket)
            var second = try raw.port.receive(timeout: .seconds(5))
            _ = try second.takeSendRight(at: 0)
            withExtendedLifetime((arrival, streamSink)) {}
        }
    }

    @Test func P11_aVouchFromASenderThisProcessDoesNotTrustIsIgnored() throws {
        #expect(!RelayTrust.trusts(.current))
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let identity = PortIdentity(origin: 0x0c0f_fee0, number: 21)
            let arrival = try sendFalselyVouched(identity, on: raw)
            #expect(try registeredFile(identity, [arrival.real, arrival.vouched]) == arrival.real,
                    "fstat's answer: the claim is ignored")

            // Nor does the claim spare the connection's check.
            let (streamSink, stream) = try streamPair()
            let refused = try raw.refusals(.badDescriptor) {
                try sendForged(vouchedRight(PortIdentity(origin: 0x0c0f_fee0, number: 22), connection: stream,
                                            counter: try SharedSlots(free: 1), vouch: arrival.vouched),
                               on: raw.socket)
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            withExtendedLifetime((arrival, streamSink)) {}
        }
    }

    @Test func P09_entryFlagsOnAnythingButASendRightAreRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let home = ReceiveRight()
            let transport = try home.core.ensureTransport()
            let connection = try transport.makeConnection(.sendOnce)
            home.core.sendOnceMade()
            var encoder = WireEncoder(export: { _ throws(PortError) in
                ExportedRight(kind: .sendOnce, identity: home.core.identity, descriptors: [connection])
            })
            let content = MessageContent(id: 3, body: [], rights: [.taken], trailer: MessageTrailer(sender: .current))
            var (head, tail) = try encoder.encode(content)
            encoder.patch(&head, descriptorCount: 1)
            let entryFlags = WireFormat.headerSize + 2
            for flags: UInt8 in [1, 2] {
                var bytes = head + tail
                bytes[entryFlags] = flags
                let refused = try raw.refusals(.unknownKind) {
                    try raw.send(bytes, descriptors: [connection.rawValue])
                    #expect(raw.nothingDelivered())
                }
                #expect(refused == 1, "entry flags \(flags) on a send-once right")
            }
        }
    }
}
