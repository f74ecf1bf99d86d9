// Harbor — tapping a port this process receives through a send right to it: what a name's
// holder does for `harbor monitor` (its session holds the name's send right, the service the
// receive right).
import HarborSystem

extension SendRight {
    /// Arms a tap on this right's port, as
    /// ``ReceiveRight/tap(bodyPrefix:capacity:)`` does, provided the port's
    /// receive right is in this process: the tap records what this process
    /// admits, so a port received elsewhere has nothing to show here.
    /// - Throws: ``PortError/Code/invalidRight`` when the receive right is
    ///   in another process, ``PortError/Code/deadName`` for a dead port,
    ///   ``PortError/Code/invalidArgument`` outside the arguments' ranges.
    package func tapReceivedHere(bodyPrefix: Int, capacity: Int) throws(PortError) -> PortTap {
        let port = token.port
        guard port.route == nil else {
            throw PortError(.invalidRight, "\(name)'s receive right is in another process")
        }
        guard !port.isDead else { throw PortError(.deadName, "\(name) is dead") }
        return try port.tap(bodyPrefix: bodyPrefix, capacity: capacity)
    }
}
