// Harbor — P12: a packet carries at most `Message.maximumCarriedRights`
// rights, as `PeerLimits.rightsPerMessage` says the parser checks. Found by
// the `decode` fuzz target (Docs/Fuzzing.md): the parser held only the
// entry count to rights + reply + regions (81), so a packet of 65 to 81
// rights and nothing else was taken.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct CarriedRightsLimitTests {
    /// A message of `count` taken rights (entries that own no descriptor).
    private func packet(rights count: Int, reply: Bool = false) -> [UInt8] {
        var writer = ByteWriter()
        writer.append(WireFormat.version)
        writer.append(WireFormat.Kind.message.rawValue)
        writer.append(reply ? WireFormat.Flags.hasReply.rawValue : 0)
        writer.append(Int32(0))                              // id
        writer.append(UInt32(0))                             // body length
        writer.append(UInt16(count + (reply ? 1 : 0)))       // entries
        writer.append(UInt16(reply ? 1 : 0))                 // descriptors
        writer.append(UInt32(0))                             // nested length
        writer.append(UInt32(WireFormat.headerSize + (count + (reply ? 1 : 0)) * WireFormat.entrySize))
        for _ in 0..<count {
            writer.append(WireFormat.RightKind.taken.rawValue)
            writer.append(UInt8(0)); writer.append(UInt16(0)); writer.append(UInt32(0))
            writer.append(UInt64(0)); writer.append(UInt64(0)); writer.append(UInt32(0)); writer.append(UInt32(0))
        }
        if reply {
            writer.append(WireFormat.RightKind.sendOnce.rawValue)
            writer.append(UInt8(1)); writer.append(UInt16(0)); writer.append(UInt32(0))
            writer.append(UInt64(1)); writer.append(UInt64(1)); writer.append(UInt32(0)); writer.append(UInt32(0))
        }
        return writer.bytes
    }

    private func parse(_ bytes: [UInt8], descriptors: Int) -> Result<WirePacket, WireRejection> {
        bytes.withUnsafeBytes { raw in
            do throws(WireRejection) { return .success(try WirePacket.parse(raw, descriptorCount: descriptors)) }
            catch { return .failure(error) }
        }
    }

    @Test func P12_theMostRightsASenderMayAttachAreTakenWithAReply() throws {
        let parsed = try parse(packet(rights: Message.maximumCarriedRights, reply: true), descriptors: 1).get()
        #expect(parsed.rights.count == Message.maximumCarriedRights)
        #expect(parsed.reply?.kind == .sendOnce)
    }

    @Test func P12_oneRightMoreIsRefused() {
        for count in [Message.maximumCarriedRights + 1, Message.maximumCarriedRights + 1 + Message.maximumRegions] {
            guard case .failure(let error) = parse(packet(rights: count), descriptors: 0) else {
                Issue.record("a packet of \(count) rights was taken")
                continue
            }
            #expect(error.reason == .badLength)
        }
    }
}
