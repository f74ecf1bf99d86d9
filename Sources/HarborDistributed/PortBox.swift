// HarborDistributed — a receive right shared by reference.
import HarborPorts

/// A receive right held by a reference, so tables of copyable values can
/// hold it: an actor's port, a call's reply port. The port lives as long
/// as the box.
final class PortBox: Sendable {
    let right: ReceiveRight

    init(_ right: consuming ReceiveRight) { self.right = right }

    var name: PortName { right.name }
}
