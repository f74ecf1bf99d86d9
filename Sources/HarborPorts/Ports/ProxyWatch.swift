// Harbor — a proxy's watch for its own hang-up in the epoll set of a port that asked for its death.
import HarborSystem

/// A watch a proxy registered on a local port's transport
/// (`PortTransport.addWatch`), so whoever receives on that port hears the
/// proxy's hang-up; the proxy removes it when it goes.
///
/// The transport is held weakly: the watching port may die first (a reply
/// port replaced after a timeout), and its transport then goes with its
/// epoll set, the watch in it included, instead of living on in the proxy.
package struct ProxyWatch: Sendable {
    package weak var transport: (any PortConnections)?
    package let token: UInt64

    package init(transport: any PortConnections, token: UInt64) {
        self.transport = transport
        self.token = token
    }
}
