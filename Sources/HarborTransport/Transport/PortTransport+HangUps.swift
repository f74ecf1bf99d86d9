// Harbor — a port's transport, hearing its senders in other processes go
// although nobody receives on the port (P06).
//
// A connection's end (EOF: every process holding its sending end is gone)
// is read by whoever pumps the port, and only a receiver pumps. So a port
// nobody receives on would never count its last sender gone, and a
// no-senders notification would never come. For a port with a no-senders
// request (and only then), each of its send connections is also watched
// for hang-up by the process's `RemoteDeathWatch` thread, the one that
// hears dead-names for other processes: no thread per port, no events but
// hang-ups (a connection's data wakes nobody there), and nothing at all
// when no such request exists. On hang-up that thread reads what is left on
// the connection into the queue, up to its end (`reapHangUp`), and the
// closing is counted as a receiver's pump would count it.
import Synchronization
import HarborSystem
import HarborPorts

extension PortTransport {

    /// The hang-up watches of a transport whose port asked for no-senders
    /// (under the table lock).
    struct HangUpWatches {
        weak var port: PortCore?
        /// `RemoteDeathWatch` tokens by connection token.
        var tokens: [UInt64: UInt64] = [:]
    }

    /// From now on, watches every send connection of this transport for
    /// hang-up on `port`'s behalf (see the top of this file). Idempotent.
    package func watchHangUps(for port: PortCore) {
        table.withLockedValue { table in
            guard !table.isShutDown, table.hangUps == nil else { return }
            table.hangUps = HangUpWatches(port: port)
            for (token, connection) in table.connections {
                watchHangUp(of: connection, token: token, in: &table)
            }
        }
    }

    /// Watches connection `token` if this transport watches hang-ups (the
    /// table lock held): called for each connection adopted.
    func watchHangUp(of connection: Connection, token: UInt64, in table: inout Table) {
        guard connection.kind == .send, let port = table.hangUps?.port, table.hangUps?.tokens[token] == nil,
              let watch = RemoteDeathWatch.shared.add(connection: connection.socket.rawValue,
                                                      token: token, of: self, port: port) else { return }
        table.hangUps?.tokens[token] = watch
    }

    /// Stops watching connection `token` (the table lock held), before its
    /// socket closes: the watch names the socket by its number.
    func unwatchHangUp(_ token: UInt64, in table: inout Table) {
        guard let watch = table.hangUps?.tokens.removeValue(forKey: token) else { return }
        RemoteDeathWatch.shared.remove(watch)
    }

    /// Stops every watch (the table lock held): the connections leave.
    func unwatchAllHangUps(in table: inout Table) {
        guard let watches = table.hangUps?.tokens else { return }
        // removeAll, not `= [:]`: Swift 6.3 does not release the old value
        // of an assignment through `?.` into this ~Copyable table (-Onone and
        // -O alike), so every transport shut down while watching leaked its
        // watch table; LeakSanitizer found it (harbord exited 1 under ASan).
        table.hangUps?.tokens.removeAll()
        for watch in watches.values { RemoteDeathWatch.shared.remove(watch) }
    }
}
