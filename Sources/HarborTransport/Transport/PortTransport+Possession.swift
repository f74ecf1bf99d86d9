// Harbor — which connections a port's transport holds, as the kernel names
// them: the facts an arriving right is checked against (P11).
import HarborSystem
import HarborPorts

extension PortTransport {
    /// Whether one of this port's connections is the socket with `inode`:
    /// the receiving end a send-once right that claims this port must be
    /// connected to (Security.md).
    package func holdsConnection(inode: UInt64) -> Bool {
        let sockets = table.withLockedValue { table in table.connections.values.map(\.socket) }
        return sockets.contains { (try? FileKey(of: $0.rawValue).inode) == inode }
    }
}
