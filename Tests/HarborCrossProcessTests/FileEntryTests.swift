// Harbor — C07, P09: carried files on the wire (entry kind 7) are parsed as
// hostile input: one descriptor each, zero identity, after the regions and
// before the reply, at most 32; a refused packet closes every file it brought.
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
import SystemPackage
@testable import HarborTransport

/// A message packet of `entries` (kind, descriptors owned, first index,
/// identity origin) and no body, declaring `descriptors` descriptors.
private func packet(
    _ entries: [(WireFormat.RightKind, UInt8, UInt32, UInt64)], flags: UInt16 = 0, descriptors: UInt16
) -> [UInt8] {
    var writer = ByteWriter()
    writer.append(WireFormat.version)
    writer.append(WireFormat.Kind.message.rawValue)
    writer.append(flags)
    writer.append(Int32(7))
    writer.append(UInt32(0))
    writer.append(UInt16(entries.count))
    writer.append(descriptors)
    writer.append(UInt32(0))
    writer.append(UInt32(WireFormat.headerSize + entries.count * WireFormat.entrySize))
    for (kind, owned, first, origin) in entries {
        writer.append(kind.rawValue)
        writer.append(owned)
        writer.append(UInt16(0))
        writer.append(first)
        writer.append(origin)
        writer.append(UInt64(0))
        writer.append(UInt32(0))
        writer.append(UInt32(0))
    }
    return writer.bytes
}

/// The refusal's reason for `bytes` with `descriptors` arrived; nil if parsed.
private func refusal(_ bytes: [UInt8], descriptors: Int) -> WireRejectionReason? {
    bytes.withUnsafeBytes { raw in
        do throws(WireRejection) {
            _ = try WirePacket.parse(raw, descriptorCount: descriptors)
            return nil
        } catch {
            return error.reason
        }
    }
}

@Suite(.serialized, .deadline(.seconds(60)))
struct FileEntryTests {
    @Test func C07_P09_fileEntriesAreParsedInTheirPlaceAndRefusedElsewhere() throws {
        let files = try packet([(.file, 1, 0, 0), (.file, 1, 1, 0)], descriptors: 2).withUnsafeBytes { raw in
            try WirePacket.parse(raw, descriptorCount: 2)
        }
        #expect(files.files == [0, 1] && files.rights.isEmpty)
        let hasReply: UInt16 = 2
        let withReply = try packet([(.memory, 1, 0, 0), (.file, 1, 1, 0), (.sendOnce, 1, 2, 9)], flags: hasReply,
                                   descriptors: 3).withUnsafeBytes { raw in
            try WirePacket.parse(raw, descriptorCount: 3)
        }
        #expect(withReply.files == [1] && withReply.regions.count == 1 && withReply.reply?.kind == .sendOnce)

        #expect(refusal(packet([(.file, 2, 0, 0)], descriptors: 2), descriptors: 2) == .descriptorMismatch)
        #expect(refusal(packet([(.file, 0, 0, 0)], descriptors: 0), descriptors: 0) == .descriptorMismatch)
        #expect(refusal(packet([(.file, 1, 0, 5)], descriptors: 1), descriptors: 1) == .badLength, "an identity")
        #expect(refusal(packet([(.file, 1, 0, 0), (.memory, 1, 1, 0)], descriptors: 2), descriptors: 2) == .badLength,
                "a file before a region")
        #expect(refusal(packet([(.file, 1, 0, 0)], flags: hasReply, descriptors: 1), descriptors: 1) == .badLength,
                "a reply flag on a file")
        let many = (0...Message.maximumCarriedFiles).map { (WireFormat.RightKind.file, UInt8(1), UInt32($0), UInt64(0)) }
        #expect(refusal(packet(many, descriptors: UInt16(many.count)), descriptors: many.count) == .badLength)
    }

    @Test func C07_P09_aRefusedPacketClosesTheFilesItBroughtAndAnAcceptedOneDeliversThem() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            var ends: [CInt] = [-1, -1]
            #expect(pipe(&ends) == 0)
            defer { close(ends[0]) }
            let count = Message.maximumCarriedFiles + 1
            let many = (0..<count).map { (WireFormat.RightKind.file, UInt8(1), UInt32($0), UInt64(0)) }
            let refused = try raw.refusals(.badLength) {
                try raw.send(packet(many, descriptors: UInt16(count)), descriptors: Array(repeating: ends[1], count: count))
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            try raw.send(packet([(.file, 1, 0, 0)], descriptors: 1), descriptors: [ends[1]])
            close(ends[1])
            var message = try raw.port.receive(timeout: .seconds(5))
            let carried = message.carriedFileCount
            #expect(carried == 1)
            let file = try message.takeFileDescriptor(at: 0)
            var byte: UInt8 = 0x5A
            #expect(write(file.rawValue, &byte, 1) == 1)
            close(file.rawValue)
            var back: UInt8 = 0
            #expect(read(ends[0], &back, 1) == 1 && back == 0x5A, "the file that arrived is the pipe's write end")
            #expect(read(ends[0], &back, 1) == 0, "and no copy of it is left open: not the refused packet's 33")
        }
    }
}
