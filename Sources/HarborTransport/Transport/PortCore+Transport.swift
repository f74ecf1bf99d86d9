// Harbor — a port's location as the transport made it: the concrete
// PortTransport and RemoteRoute behind HarborPorts' two protocols.
import HarborPorts

extension PortTransport: PortConnections {}

extension PortCore {
    /// The port's connections, for a port received here that has them.
    /// Only HarborTransport makes a `PortConnections`: this is the
    /// transport's own object.
    var portTransport: PortTransport? { connections as? PortTransport }

    /// The connection a proxy sends through (HarborTransport's own object;
    /// nil for a port received here). Also for test helpers that misbehave
    /// on purpose (harbor-peer).
    package var remoteRoute: RemoteRoute? { route as? RemoteRoute }
}
