// Harbor — a port set: an epoll set over its members' readiness descriptors.

import Synchronization
import HarborSystem

package final class PortSetCore: Sendable {
    private let epoll: Epoll
    // Members by the raw port name used as their epoll token, with the
    // readiness descriptor registered for each. Strong references: a member
    // leaves when its port dies, moves away or is removed.
    private let members = HarborLock<[UInt64: (port: PortCore, descriptor: CInt)]>([:])

    package init() throws(SystemError) {
        epoll = try Epoll()
    }

    package var descriptor: CInt { epoll.rawValue }

    package func addMember(_ port: PortCore, descriptor fd: CInt) throws(SystemError) {
        let inserted = members.withLockedValue { $0.updateValue((port, fd), forKey: port.name.rawValue) == nil }
        guard inserted else { return }
        do {
            try epoll.add(fd, events: .readable, token: port.name.rawValue)
        } catch {
            members.withLockedValue { _ = $0.removeValue(forKey: port.name.rawValue) }
            throw error
        }
    }

    /// Forgets `name` and takes its descriptor out of the epoll set (while
    /// it is still open: the port calls this before closing it). A port that
    /// moved to another process keeps its descriptor: left in the set, it
    /// would wake the set for a port that is no longer a member.
    @discardableResult
    package func removeMember(_ name: PortName) -> PortCore? {
        guard let member = members.withLockedValue({ $0.removeValue(forKey: name.rawValue) }) else { return nil }
        try? epoll.remove(member.descriptor)
        return member.port
    }

    package func removeMember(_ port: PortCore, descriptor fd: CInt) {
        removeMember(port.name)
    }

    package func contains(_ name: PortName) -> Bool {
        members.withLockedValue { $0[name.rawValue] != nil }
    }

    package var memberNames: [PortName] {
        members.withLockedValue { $0.keys.sorted().map(PortName.init(rawValue:)) }
    }

    /// Takes the next message from any member, waiting until `deadline`.
    package func dequeue(deadline: WaitDeadline) throws(PortError) -> MessageContent {
        var event = EpollEvent.empty
        var lookedAgain = false
        while true {
            let count: Int
            do {
                count = try withUnsafeMutablePointer(to: &event) { pointer throws(SystemError) in
                    try epoll.wait(into: UnsafeMutableBufferPointer(start: pointer, count: 1),
                                   timeout: deadline.remaining())
                }
            } catch {
                throw PortError(error, "waiting on a port set")
            }
            // `tryDequeue` finding nothing clears the member's readiness, so
            // the next wait sleeps (P12): no member is readable while empty.
            if count == 1, let port = members.withLockedValue({ $0[event.token]?.port }),
               let content = port.tryDequeue() {
                return content
            }
            if deadline.hasPassed {
                // The wait ended empty-handed past the deadline: it timed
                // out, or a signal cut it short (epoll_pwait2 fails with
                // EINTR after SIGSTOP and SIGCONT). One more look without
                // waiting, so a message that arrived meanwhile is taken, as
                // `mach_msg` returns a queued message whatever its timeout (P04).
                if count == 0 && !lookedAgain {
                    lookedAgain = true
                    continue
                }
                throw PortError(.timedOut, "no message arrived on the port set in time")
            }
        }
    }
}
