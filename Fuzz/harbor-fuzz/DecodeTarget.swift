// Harbor fuzzing — the packet decoder in process: no socket, no system call.
//
// The input is a packet as `InboundPacket.decode` sees it once the kernel
// has delivered it: `[arrived descriptors] [mode] packet bytes…`. The
// target runs the decoder's pure steps in its order (the plain-message
// fast path, `WireHeader.decode`, `WirePacket.parseFragment`, the
// memory-file wrapper's checks, `WirePacket.parse` with its transfer
// records, nested queues and regions) straight over the bytes, then
// checks what an accepted packet promises the importer (`PacketInvariants`)
// and that the two decoders of a plain message agree, as do the two of a
// message carrying one send right and nothing else. Mode bit 0: the
// first 24 bytes are a memory-file packet's outer header, the rest the
// file's contents (what `decodeFromMemoryFile` parses).
import Glibc
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

enum DecodeTarget {
    static func run(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        let arrived = Int(data[0])
        let memoryFile = data[1] & 1 != 0
        let packet = Array(data[2...])
        packet.withUnsafeBytes { bytes in
            if memoryFile { decodeMemoryFile(bytes, arrived: arrived) } else { decode(bytes, arrived: arrived) }
        }
    }

    /// `InboundPacket.decode`'s steps for a packet read from a socket.
    private static func decode(_ bytes: UnsafeRawBufferPointer, arrived: Int) {
        let plain = arrived == 0 ? InboundPacket.PlainHeader(bytes, byteCount: bytes.count) : nil
        let sole = arrived == 2 && bytes.count >= WireHeader.size
            ? InboundPacket.SoleSendRight(UnsafeRawBufferPointer(rebasing: bytes[..<WireHeader.size]),
                                          rest: UnsafeRawBufferPointer(rebasing: bytes[WireHeader.size...]),
                                          byteCount: bytes.count)
            : nil
        let claimsCounted = WireHeader.claimsCountedMessage(bytes, byteCount: bytes.count)
        let header: WireHeader
        do { header = try WireHeader.decode(bytes, validating: bytes.count) } catch {
            if plain != nil || sole != nil {
                fail("decode: a fast path accepted a header WireHeader.decode refuses: \(error)")
            }
            return
        }
        if claimsCounted != (header.kind == .message && header.flags.contains(.countsAgainstLimit)) {
            fail("decode: claimsCountedMessage says \(claimsCounted) of a \(header.kind) with flags \(header.flags.rawValue)")
        }
        if header.kind == .fragment {
            if plain != nil || sole != nil { fail("decode: a fast path accepted a fragment") }
            guard let range = try? WirePacket.parseFragment(bytes, descriptorCount: arrived) else { return }
            guard arrived == 0, range.lowerBound == WireHeader.size, range.upperBound == bytes.count,
                  !range.isEmpty, range.count <= WireFormat.maximumFragmentData else {
                fail("decode: fragment data \(range) of a \(bytes.count)-byte packet with \(arrived) descriptors")
            }
            return
        }
        if header.flags.contains(.inMemoryFile) {
            // The wrapper's own checks run in the memory-file mode, where the
            // file's contents follow it.
            if plain != nil || sole != nil { fail("decode: a fast path accepted a memory-file wrapper") }
            return
        }
        let parsed: WirePacket
        do { parsed = try WirePacket.parse(bytes, descriptorCount: arrived) } catch {
            if plain != nil || sole != nil { fail("decode: a fast path accepted what WirePacket.parse refuses: \(error)") }
            return
        }
        PacketInvariants.check(parsed, bytes, arrived: arrived, header: header)
        compare(plain, parsed, header, bytes, arrived: arrived)
        compare(sole, parsed, header, arrived: arrived)
    }

    /// The two decoders of a message carrying one send right and nothing
    /// else agree the same way (`InboundPacket.SoleSendRight`).
    private static func compare(
        _ sole: InboundPacket.SoleSendRight?, _ parsed: WirePacket, _ header: WireHeader, arrived: Int
    ) {
        let isSole = arrived == 2 && parsed.kind == .message && header.entryCount == 1 && header.nestedLength == 0
            && WireFormat.Flags.countsAgainstLimit.isSuperset(of: parsed.flags)
            && parsed.rights.count == 1 && parsed.rights[0].kind == .send && parsed.reply == nil
        guard let sole else {
            if isSole { fail("decode: the one-send-right path refused a message the parser took as one") }
            return
        }
        let bodyStart = WireHeader.size + WireFormat.entrySize
        guard isSole, sole.id == parsed.id, sole.identity == parsed.rights[0].identity,
              sole.vouch == parsed.rights[0].vouch, parsed.rights[0].firstDescriptor == 0, parsed.rights[0].descriptorCount == 2,
              parsed.body == bodyStart..<(bodyStart + sole.bodyLength),
              sole.countsAgainstLimit == parsed.flags.contains(.countsAgainstLimit) else {
            fail("decode: the one-send-right path and the parser disagree: id \(sole.id)/\(parsed.id), "
                 + "body \(sole.bodyLength)/\(parsed.body), flags \(parsed.flags.rawValue)")
        }
    }

    /// The two decoders of a plain message must agree: what the fast path
    /// takes, the full parser takes as the same message, and a message the
    /// full parser finds plain, the fast path takes.
    private static func compare(
        _ plain: InboundPacket.PlainHeader?, _ parsed: WirePacket, _ header: WireHeader,
        _ bytes: UnsafeRawBufferPointer, arrived: Int
    ) {
        let isPlain = arrived == 0 && parsed.kind == .message && header.entryCount == 0 && header.nestedLength == 0
            && WireFormat.Flags.countsAgainstLimit.isSuperset(of: parsed.flags)
        guard let plain else {
            if isPlain { fail("decode: the plain path refused a plain message the parser took") }
            return
        }
        guard isPlain, plain.id == parsed.id, plain.bodyLength == parsed.body.count,
              parsed.body == WireHeader.size..<bytes.count,
              plain.countsAgainstLimit == parsed.flags.contains(.countsAgainstLimit) else {
            fail("decode: the plain path and the parser disagree: id \(plain.id)/\(parsed.id), "
                 + "body \(plain.bodyLength)/\(parsed.body), flags \(parsed.flags.rawValue)")
        }
    }

    /// `decodeFromMemoryFile`'s steps: the outer header, then the file's packet.
    private static func decodeMemoryFile(_ bytes: UnsafeRawBufferPointer, arrived: Int) {
        guard bytes.count >= WireHeader.size else { return }
        let outer = UnsafeRawBufferPointer(rebasing: bytes[..<WireHeader.size])
        let inner = UnsafeRawBufferPointer(rebasing: bytes[WireHeader.size...])
        guard let header = try? WireHeader.decode(outer, validating: WireHeader.size),
              header.flags.contains(.inMemoryFile), header.isMemoryFileWrapper,
              header.descriptorCount == arrived, arrived >= 1 else { return }
        // The inner packet indexes the descriptors after the memfd.
        guard let parsed = try? WirePacket.parse(inner, descriptorCount: arrived - 1), parsed.kind == .message,
              let innerHeader = try? WireHeader.decode(inner, validating: inner.count) else { return }
        PacketInvariants.check(parsed, inner, arrived: arrived - 1, header: innerHeader)
    }

    static let seeds: [[UInt8]] = DecodeSeeds.make()
}
