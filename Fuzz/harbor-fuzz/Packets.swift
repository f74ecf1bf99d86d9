// Harbor fuzzing — messages built from specs, and bytes damaged by edits.
import CHarborLinux
import Glibc
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

/// Builds a message's content from its spec: real rights to fresh ports of
/// the peer's, moved receive rights with messages queued on them and
/// notification requests, sealed and copied regions.
struct Builder {
    let holdings: Holdings

    func content(_ spec: MessageSpec, depth: Int) -> MessageContent? {
        let body = Packets.filled(spec.bodyLength, with: UInt8(truncatingIfNeeded: spec.id))
        var rights: [CarriedRight] = []
        for right in spec.rights {
            switch right {
            case .send: rights.append(.send(SendRightToken(port: holdings.freshPort())))
            case .sendOnce: rights.append(.sendOnce(SendOnceToken(port: holdings.freshPort())))
            case .taken: rights.append(.taken)
            case .receive(let port): rights.append(.receive(moved(port, depth: depth)))
            }
        }
        let reply: CarriedRight? = switch spec.reply {
        case .none: nil
        case .send: .send(SendRightToken(port: holdings.freshPort()))
        case .sendOnce: .sendOnce(SendOnceToken(port: holdings.freshPort()))
        }
        var content = MessageContent(id: spec.id, body: body, rights: rights, reply: reply,
                                     trailer: MessageTrailer(sender: .current), countsAgainstLimit: spec.counted)
        for region in spec.regions {
            let bytes = Packets.filled(min(region.size, 4096), with: UInt8(truncatingIfNeeded: region.size))
            if region.copied {
                guard let copy = try? MappedRegion(privateCount: region.size) else { continue }
                if !bytes.isEmpty { copy.privateBytes.copyBytes(from: bytes) }
                content.regions.append(copy)
            } else {
                let seals = charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL
                guard let file = Decoys.memoryFile(size: region.size, seals: seals, fill: 0, contents: bytes),
                      let mapped = try? MappedRegion(sealed: file, limit: Int.max) else { continue }
                content.regions.append(mapped)
            }
        }
        return content
    }

    /// A fresh port with `spec`'s queue and requests, its receive right ready to move.
    private func moved(_ spec: PortSpec, depth: Int) -> ReceiveRightToken {
        let port = ReceiveRight()
        if spec.limit != 0 { try? port.setQueueLimit(Int(spec.limit % 8)) }
        let sender = port.makeSendRight()
        for queued in spec.queued {
            guard let content = content(queued, depth: depth + 1) else { continue }
            try? sender.send(Message(content: content), timeout: .zero)
        }
        if spec.noSenders {
            port.requestNoSendersNotification(to: SendOnceRight(token: SendOnceToken(port: holdings.freshPort())))
        }
        if spec.portDestroyed {
            port.requestPortDestroyedNotification(to: SendOnceRight(token: SendOnceToken(port: holdings.freshPort())))
        }
        return port.token
    }
}

/// Packet bytes as the wire format has them (Docs/WireFormat.md), and damage.
enum Packets {
    static func header(
        kind: WireFormat.Kind, flags: UInt16, bodyLength: Int, entries: Int, descriptors: Int, total: Int
    ) -> [UInt8] {
        var writer = ByteWriter(capacity: WireFormat.headerSize)
        writer.append(WireFormat.version)
        writer.append(kind.rawValue)
        writer.append(flags)
        writer.append(Int32(0))
        writer.append(UInt32(truncatingIfNeeded: bodyLength))
        writer.append(UInt16(truncatingIfNeeded: entries))
        writer.append(UInt16(truncatingIfNeeded: descriptors))
        writer.append(UInt32(0))
        writer.append(UInt32(truncatingIfNeeded: total))
        return writer.bytes
    }

    /// A fragment packet carrying `data`.
    static func fragment(_ data: ArraySlice<UInt8>) -> [UInt8] {
        header(kind: .fragment, flags: 0, bodyLength: data.count, entries: 0, descriptors: 0, total: 24 + data.count) + data
    }

    /// A fragment packet of `data` bytes, each `byte`.
    static func fragment(data: Int, byte: UInt8) -> [UInt8] {
        fragment(filled(data, with: byte)[...])
    }

    /// `count` bytes of `value`, by `memset`: a loop here would be
    /// instrumented for coverage, and bodies run to 64 KiB.
    static func filled(_ count: Int, with value: UInt8) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress { memset(base, CInt(value), count) }
            initialized = count
        }
    }

    /// A plain message: an id and a body.
    static func plain(id: Int32, body: [UInt8]) -> [UInt8] {
        var bytes = header(kind: .message, flags: 1, bodyLength: body.count, entries: 0, descriptors: 0,
                           total: 24 + body.count) + body
        withUnsafeBytes(of: id.littleEndian) { bytes.replaceSubrange(4..<8, with: $0) }
        return bytes
    }

    /// A message carrying `files` open files (entry kind 7, one descriptor
    /// each) and nothing else: what `Message.attach(_:)` sends (C07).
    static func files(id: Int32, count files: Int) -> [UInt8] {
        var bytes = header(kind: .message, flags: 1, bodyLength: 0, entries: files, descriptors: files,
                           total: 24 + files * WireFormat.entrySize)
        withUnsafeBytes(of: id.littleEndian) { bytes.replaceSubrange(4..<8, with: $0) }
        for index in 0..<files {
            var entry = [UInt8](repeating: 0, count: WireFormat.entrySize)
            entry[0] = WireFormat.RightKind.file.rawValue
            entry[1] = 1
            withUnsafeBytes(of: UInt32(index).littleEndian) { entry.replaceSubrange(4..<8, with: $0) }
            bytes += entry
        }
        return bytes
    }

    /// Values at the edges of what the decoder checks.
    static let interesting: [UInt32] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32, 56, 64, 65, 81, 0x7F, 0x80, 0xFF, 0x100, 253, 254, 1024, 1025, 2048,
        4096, 0x7FFF, 0x8000, 0xFFFF, 0x1_0000, 0x1_0001, 98_280, 98_304, 98_305, 1 << 30, (1 << 30) + 1,
        0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF,
    ]

    /// 64-bit values at the edges of what the receiver adds to or compares.
    static let interestingWide: [UInt64] = [
        .max, .max - 1, 1 << 63, (1 << 63) - 1, 1 << 62, (1 << 62) + 1, 1 << 32, PortIdentity.processNonce,
    ]

    /// Applies one edit; `sections` are header, entries, body, nested, all.
    static func apply(_ edit: ByteEdit, to bytes: inout [UInt8], sections: [Range<Int>]) {
        let section = sections[Int(edit.section) % sections.count].clamped(to: 0..<bytes.count)
        let operation = edit.operation % 10
        guard !section.isEmpty || operation == 7 else { return }
        let offset = section.lowerBound + Int(edit.offset) % max(section.count, 1)
        let value = edit.value
        switch operation {
        case 0: bytes[offset] = UInt8(truncatingIfNeeded: value)
        case 1: bytes[offset] ^= 1 << (value % 8)
        case 2: store(value, at: offset, width: 4, in: &bytes)
        case 3:
            let old = load(at: offset, width: 4, in: bytes)
            store(old &+ (value % 17) &- 8, at: offset, width: 4, in: &bytes)
        case 4: store(interesting[Int(value) % interesting.count], at: offset, width: 4, in: &bytes)
        case 5: store(interesting[Int(value) % interesting.count], at: offset, width: 2, in: &bytes)
        case 6: bytes.removeSubrange(offset...)
        case 7: bytes.insert(contentsOf: [UInt8](repeating: UInt8(truncatingIfNeeded: value >> 8), count: Int(value % 64)), at: offset)
        case 8:
            // Make the total length agree with the bytes again.
            if bytes.count >= 24 { store(UInt32(truncatingIfNeeded: bytes.count), at: 20, width: 4, in: &bytes) }
        default:
            // A 64-bit field (a right's identity, a transfer's sequence number and make-send count).
            let wide = value & 0x8000_0000 != 0 ? interestingWide[Int(value) % interestingWide.count]
                : UInt64(interesting[Int(value) % interesting.count]) << (value & 0x100 != 0 ? 32 : 0)
            for index in 0..<8 where offset + index < bytes.count {
                bytes[offset + index] = UInt8(truncatingIfNeeded: wide >> (8 * UInt64(index)))
            }
        }
    }

    private static func store(_ value: UInt32, at offset: Int, width: Int, in bytes: inout [UInt8]) {
        for index in 0..<width where offset + index < bytes.count {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index)))
        }
    }

    private static func load(at offset: Int, width: Int, in bytes: [UInt8]) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<width where offset + index < bytes.count {
            value |= UInt32(bytes[offset + index]) << (8 * UInt32(index))
        }
        return value
    }
}
