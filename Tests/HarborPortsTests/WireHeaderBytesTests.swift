// Harbor — the packet header's bytes are pinned: Docs/WireFormat.md's table, byte for byte.
//
// Processes built from different commits talk over these bytes, and the
// fuzz corpora were recorded in them; a change of offset, width or byte
// order must fail here before it ships, not show up as a refused packet in
// someone's daemon.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct WireHeaderBytesTests {
    /// A header with every field distinct, so a swapped or shifted field shows.
    private let header = WireHeader(
        kind: .message, flags: [.countsAgainstLimit, .hasReply, .transfers], id: -2, bodyLength: 0x0102_0304,
        entryCount: 0x0506, descriptorCount: 0x0708, nestedLength: 0x090A_0B0C, totalLength: 0x0D0E_0F10)

    /// The same header as Docs/WireFormat.md lays it out, little-endian.
    private let bytes: [UInt8] = [
        1,                       // version
        1,                       // kind: message
        0x13, 0x00,              // flags: 1 | 2 | 16
        0xFE, 0xFF, 0xFF, 0xFF,  // id: -2
        0x04, 0x03, 0x02, 0x01,  // body length
        0x06, 0x05,              // entry count
        0x08, 0x07,              // descriptor count
        0x0C, 0x0B, 0x0A, 0x09,  // nested length
        0x10, 0x0F, 0x0E, 0x0D,  // total length
    ]

    @Test func P09_aHeaderEncodesToTheDocumentedBytes() {
        let encoded = header.encoded.withUnsafeBytes { Array($0) }
        #expect(encoded == bytes)
        #expect(WireHeader.size == bytes.count)
    }

    @Test func P09_theDocumentedBytesDecodeToTheHeader() throws {
        let decoded = try bytes.withUnsafeBytes { try WireHeader.decode($0, validating: 0x0D0E_0F10) }
        #expect(decoded == header)
    }

    @Test func P09_theDescriptorCountIsPatchedInPlace() {
        var patched = bytes
        WireHeader.setDescriptorCount(0x0201, in: &patched)
        #expect(patched[14] == 0x01 && patched[15] == 0x02)
        #expect(Array(patched[..<14]) == Array(bytes[..<14]) && Array(patched[16...]) == Array(bytes[16...]))
    }

    @Test func P09_aCountedMessageIsRecognisedFromItsFirstBytesAlone() {
        #expect(bytes.withUnsafeBytes { WireHeader.claimsCountedMessage($0, byteCount: 4) })
        var uncounted = bytes
        uncounted[2] = 0x12
        #expect(!uncounted.withUnsafeBytes { WireHeader.claimsCountedMessage($0, byteCount: 4) })
        var fragment = bytes
        fragment[1] = 3
        #expect(!fragment.withUnsafeBytes { WireHeader.claimsCountedMessage($0, byteCount: 4) })
    }
}
