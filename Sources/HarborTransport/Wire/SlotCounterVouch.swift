// Harbor — a send right's slot counter named by a name server the receiver
// trusts, so the receiver need not ask the kernel (Docs/Security.md, P11).
import HarborSystem
import HarborPorts
import Synchronization

/// What a sender says a send right's slot counter file is: the device and
/// inode it found with `fstat` when the right reached it, both within 32
/// bits (a memfd's, on Linux), written in the entry's bytes 24–31 with flag
/// ``WireFormat/EntryFlags/vouched`` (Docs/WireFormat.md).
///
/// A receiver proves which port a send right stands for by the slot
/// counter's file (`FileKey(of:)`, one `fstat`) and checks that the
/// connection is a packet socket (`getsockopt(SO_TYPE)`). From a name
/// server it trusts (``RelayTrust``: the kernel named it, when this
/// process connected to its socket) it takes the server's word for both
/// instead: that server already hands out every right this process looks
/// up, checked both facts when the right reached it, and sends the same
/// descriptors on. From any other sender the vouch is read and ignored:
/// bytes confer nothing.
///
/// A process vouches only once it serves names (``startVouching()``):
/// nobody else's vouch is believed, so nobody else pays for writing one.
package struct SlotCounterVouch: Equatable, Sendable {
    package let device: UInt32
    package let inode: UInt32

    package init(device: UInt32, inode: UInt32) {
        self.device = device
        self.inode = inode
    }

    /// `file` as a vouch, or nil if either number needs more than 32 bits.
    package init?(_ file: FileKey) {
        guard let device = UInt32(exactly: file.device), let inode = UInt32(exactly: file.inode) else { return nil }
        self.init(device: device, inode: inode)
    }

    /// The file it names.
    package var file: FileKey { FileKey(device: UInt64(device), inode: UInt64(inode)) }

    /// The vouch for a right from `sender`: `claimed` if `sender` is a name
    /// server this process trusts, else nil (ask the kernel).
    @inline(__always)
    static func believed(_ claimed: SlotCounterVouch?, from sender: ProcessIdentity) -> SlotCounterVouch? {
        guard let claimed, RelayTrust.trusts(sender) else { return nil }
        return claimed
    }

    // MARK: Who vouches

    private static let vouching = Atomic(false)

    /// Whether this process writes a vouch into the send rights it sends.
    static var isVouching: Bool { vouching.load(ordering: .relaxed) }

    /// From now on, this process vouches for the slot counters of the send
    /// rights it sends, where it knows them: a name server (`harbord`'s
    /// ``BootstrapServer``) calls it once.
    package static func startVouching() { vouching.store(true, ordering: .relaxed) }
}
