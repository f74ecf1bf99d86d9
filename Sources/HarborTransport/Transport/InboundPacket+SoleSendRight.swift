// Harbor — a packet carrying one send right and nothing else (a look-up's
// answer), decoded without the general parser's arrays.
import HarborSystem
import HarborPorts

extension InboundPacket {
    /// The header and entry of a message carrying one send right and
    /// nothing else, checked: what `OutboundPacket.soleSendRightHead`
    /// writes. Version, kind `message`, only the limit flag, one entry, two
    /// descriptors, no nested section, a body within the limit, lengths
    /// that add up to the packet's `byteCount`; the entry a `send` right of
    /// descriptors 0 and 1 with no transfer, or with its sender's vouch
    /// (flag `vouched`, ``SlotCounterVouch``). Every packet of this shape
    /// passes `WirePacket.parse` and decodes to the same message; any other
    /// (including anything malformed) is nil here and goes to the full
    /// parser, which examines and refuses it as before.
    package struct SoleSendRight {
        package let id: Int32
        package let identity: PortIdentity
        /// The sender's word on the right's slot counter, if it gave one.
        package let vouch: SlotCounterVouch?
        package let bodyLength: Int
        let countsAgainstLimit: Bool

        /// Reads the header at the front of `header` and the entry and body
        /// at the front of `rest` (the bytes after the header, all of them
        /// there); nil unless the packet of `byteCount` bytes has this shape.
        package init?(_ header: UnsafeRawBufferPointer, rest: UnsafeRawBufferPointer, byteCount: Int) {
            guard let decoded = try? WireHeader.decode(header, validating: byteCount),
                  decoded.kind == .message, WireFormat.Flags.countsAgainstLimit.isSuperset(of: decoded.flags),
                  decoded.entryCount == 1, decoded.descriptorCount == 2, decoded.nestedLength == 0,
                  decoded.bodyLength <= Message.maximumBodySize,
                  decoded.totalLength == WireFormat.headerSize + WireFormat.entrySize + decoded.bodyLength,
                  rest.count >= WireFormat.entrySize + decoded.bodyLength else { return nil }
            // The entry's fields, as `WireEncoder.writeEntry` lays them out.
            func field<Value: FixedWidthInteger>(_ offset: Int, _: Value.Type) -> Value {
                Value(littleEndian: rest.loadUnaligned(fromByteOffset: offset, as: Value.self))
            }
            guard field(0, UInt8.self) == WireFormat.RightKind.send.rawValue, field(1, UInt8.self) == 2,
                  field(4, UInt32.self) == 0 else { return nil }
            switch WireFormat.EntryFlags(rawValue: field(2, UInt16.self)) {
            case []:
                guard field(24, UInt32.self) == 0, field(28, UInt32.self) == 0 else { return nil }
                vouch = nil
            case .vouched:
                vouch = SlotCounterVouch(device: field(24, UInt32.self), inode: field(28, UInt32.self))
            default:
                return nil
            }
            let origin = field(8, UInt64.self), number = field(16, UInt64.self)
            id = decoded.id
            identity = PortIdentity(origin: origin, number: number)
            bodyLength = decoded.bodyLength
            countsAgainstLimit = !decoded.flags.isEmpty
        }

        /// The message from `sender`, its right imported from `socket` and
        /// `slots` (the packet's descriptors 0 and 1, owned from here on)
        /// as `materialize` imports any send right (P11), its body copied
        /// from `rest` after the entry.
        package func content(
            rest: UnsafeRawBufferPointer, sender: ProcessIdentity, socket: SharedDescriptor, slots: SharedDescriptor
        ) throws(WireRejection) -> MessageContent {
            let token = try PortCore.importSendRight(identity, socket: socket, slots: slots,
                                                     vouched: SlotCounterVouch.believed(vouch, from: sender))
            let bodyStart = WireFormat.entrySize
            let body = [UInt8](UnsafeRawBufferPointer(rebasing: rest[bodyStart..<(bodyStart + bodyLength)]))
            return MessageContent(id: id, body: body, rights: [.send(token)], trailer: MessageTrailer(sender: sender),
                                  countsAgainstLimit: countsAgainstLimit)
        }
    }
}
