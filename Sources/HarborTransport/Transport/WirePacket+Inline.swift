// Harbor — what a parsed packet would make this process copy out of it
// (P12): the inline bodies of the messages queued in the receive rights it
// moves, counted from the parse, before any body is copied.
//
// A memory-file packet may hold up to `WireFormat.maximumMemoryFilePacket`
// bytes, and a sparse memfd costs its sender nothing; the bodies in it are
// copied into arrays when the packet is decoded. So what they add up to is
// checked first (`PeerLimits.queuedInlineBytesPerUid`) and the packet is
// refused (`overLimit`) with nothing copied; what is admitted is charged to
// the delivering uid on the port it joins (HarborPorts' PortCore+Charges.swift).
import HarborSystem
import HarborPorts

extension WirePacket {
    /// Bytes of the inline bodies of every message queued in the receive
    /// rights this packet moves, nested queues included (not its own body,
    /// at most `Message.maximumBodySize`).
    package var movedInlineBytes: Int {
        var total = 0
        for right in rights { total += right.movedInlineBytes }
        if let reply { total += reply.movedInlineBytes }
        return total
    }

    /// Refuses (`overLimit`) a packet from `uid` whose moved queues' bodies
    /// are more than the uid may still queue here (its share of the
    /// process-wide total, PeerLedger), before anything is copied out of it.
    /// What is admitted is charged when it joins its port.
    package func checkMovedInlineBytes(from uid: UInt32) throws(WireRejection) {
        let bytes = movedInlineBytes
        guard bytes > 0 else { return }
        let room = PeerLedger.movedInlineRoom(for: uid)
        guard bytes <= room else {
            throw WireRejection(.overLimit, "moved queues of \(bytes) bytes of bodies from uid \(uid), "
                                + "\(room) bytes of room")
        }
    }
}

extension WireRight {
    /// Bytes of the inline bodies queued in this moved receive right, nested ones included.
    var movedInlineBytes: Int {
        guard let transfer else { return 0 }
        var total = 0
        for message in transfer.queued { total += message.body.count + message.movedInlineBytes }
        return total
    }
}
