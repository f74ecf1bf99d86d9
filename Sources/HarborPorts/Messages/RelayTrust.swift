// Harbor — the relays whose word on a relayed message's sender this process takes: its name servers.
import HarborSystem

/// The processes this process trusts to say who sent the messages they relay.
///
/// A message queued on a port whose receive right then moves here arrives
/// from the process the port came from (the relay), with that process's
/// account of who sent it (``MessageTrailer/claimedOriginalSender``). Only
/// a relay in this set is believed: its account becomes
/// ``MessageTrailer/sender``. Any other relay is the sender itself (P11).
///
/// The set holds the name servers this process's bootstrap clients are
/// connected to, each identified by the kernel (`SCM_CREDENTIALS` of the
/// welcome it sent on a connection this process made to the server's
/// socket), never by a claim: `HarborBootstrap` adds a server when it
/// connects and removes it when the server goes. A process that connects to
/// no name server trusts no relay; one whose client connects to a socket a
/// hostile process answers on trusts that process, which is then its name
/// server anyway (it hands out every right the client looks up).
///
/// A relay is matched by pid, uid and gid together: a process that reused
/// the pid of an exited name server is not trusted unless it also runs as
/// the server's user, which `harbord`'s dedicated user keeps to it.
///
/// **Thread safety:** any thread.
public enum RelayTrust {
    /// The trusted relays with how many ``trust(_:)`` calls each holds: one
    /// entry per name server this process is connected to, so a short list
    /// searched in order (each vouched reply's check compares a few words
    /// under the lock and hashes nothing).
    private static let trusted = HarborLock<[(relay: ProcessIdentity, count: Int)]>([])

    /// Whether `relay`'s word on who sent the messages it relays is taken.
    public static func trusts(_ relay: ProcessIdentity) -> Bool {
        trusted.withLockedValue { list in list.contains { $0.relay == relay } }
    }

    /// Takes `server`'s word from now on (counted: each call needs its ``revoke(_:)``).
    package static func trust(_ server: ProcessIdentity) {
        trusted.withLockedValue { list in
            if let index = list.firstIndex(where: { $0.relay == server }) {
                list[index].count += 1
            } else {
                list.append((server, 1))
            }
        }
    }

    /// Withdraws one ``trust(_:)`` of `server`.
    package static func revoke(_ server: ProcessIdentity) {
        trusted.withLockedValue { list in
            guard let index = list.firstIndex(where: { $0.relay == server }) else { return }
            if list[index].count > 1 { list[index].count -= 1 } else { list.remove(at: index) }
        }
    }
}
