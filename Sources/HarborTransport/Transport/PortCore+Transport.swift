// Harbor — a port's location as the transport made it: the concrete
// PortTransport and RemoteRoute behind HarborPorts' two protocols.
import HarborPorts

extension PortTransport: PortConnections {}

extension PortCore.Guarded {
    /// The port's connections, for a port received here that has them.
    /// Only HarborTransport makes a `PortConnections`: this is the transport's
    /// own object.
    var portTransport: PortTransport? { transport as? PortTransport }

    /// The connection a proxy sends through (HarborTransport's own object).
    var remoteRoute: RemoteRoute? { route as? RemoteRoute }
}
