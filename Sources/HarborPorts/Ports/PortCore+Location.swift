// Harbor — where a port is: here alone, here and reachable from other
// processes, or a proxy for a port received in another process.
//
// One enum, so a port can be only one of them (issue 13): a proxy has a
// route and never a transport, a port received here has a transport once
// other processes can send to it and never a route.
import HarborSystem

extension PortCore {
    /// Where a port's receive right is, and how messages reach it.
    package enum Location {
        /// Received here; no process but this one sends to it (no
        /// descriptor of it has left).
        case local
        /// Received here; other processes send through the connections of
        /// `transport`, which holds the port's shared slot counter.
        case receiving(any PortConnections)
        /// The receive right lives in another process: every send goes
        /// through `route`. The port was imported with a send or send-once
        /// right, or its own receive right moved away.
        case proxy(any PortRoute)

        package var isProxy: Bool {
            if case .proxy = self { true } else { false }
        }
    }
}

extension PortCore.Guarded {
    /// The connection every send goes through, for a proxy.
    package var route: (any PortRoute)? {
        if case .proxy(let route) = location { route } else { nil }
    }

    /// The connections from other processes, for a port received here
    /// that has them.
    package var transport: (any PortConnections)? {
        if case .receiving(let transport) = location { transport } else { nil }
    }
}

extension PortCore {
    /// The process messages to this port reach (`SendRight.receivingProcess`).
    package var receivingProcess: ProcessIdentity? {
        guard let route = state.withGuarded({ $0.route }) else { return .current }
        return try? route.creator()
    }

    /// Descriptors this process holds for the port: for a port received
    /// here, its readiness eventfd and epoll set, its slot counter and one
    /// per connection once other processes can reach it; for a proxy, its
    /// connection and (for a send right) the port's slot counter.
    package var heldDescriptors: Int {
        let (route, transport, readiness) = state.withGuarded { ($0.route, $0.transport, $0.readinessFD >= 0) }
        if let route { return route.slots == nil ? 1 : 2 }
        let ready = readiness ? 2 : 0
        guard let transport else { return ready }
        return ready + 1 + transport.connectionCount
    }
}
