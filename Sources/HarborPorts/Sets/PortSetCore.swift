// Harbor — a port set: an epoll set over its members' readiness descriptors.

import CHarborLinux
import Synchronization

package final class PortSetCore: Sendable {
    private let epoll: Epoll
    // Members by the raw port name used as their epoll token. Strong
    // references: a member leaves when its port dies or is removed.
    private let members = Mutex<[UInt64: PortCore]>([:])

    package init() throws(SystemError) {
        epoll = try Epoll()
    }

    package var descriptor: CInt { epoll.rawValue }

    package func addMember(_ port: PortCore, descriptor fd: CInt) throws(SystemError) {
        let inserted = members.withLock { $0.updateValue(port, forKey: port.name.rawValue) == nil }
        guard inserted else { return }
        do {
            try epoll.add(fd, events: .readable, token: port.name.rawValue)
        } catch {
            members.withLock { _ = $0.removeValue(forKey: port.name.rawValue) }
            throw error
        }
    }

    /// Forgets `name`; its descriptor leaves the epoll set when closed or
    /// when the caller removes it explicitly.
    @discardableResult
    package func removeMember(_ name: PortName) -> PortCore? {
        members.withLock { $0.removeValue(forKey: name.rawValue) }
    }

    package func removeMember(_ port: PortCore, descriptor fd: CInt) {
        if removeMember(port.name) != nil { try? epoll.remove(fd) }
    }

    package func contains(_ name: PortName) -> Bool {
        members.withLock { $0[name.rawValue] != nil }
    }

    package var memberNames: [PortName] {
        members.withLock { $0.keys.sorted().map(PortName.init(rawValue:)) }
    }

    /// Takes the next message from any member, waiting until `deadline`.
    package func dequeue(deadline: WaitDeadline) throws(PortError) -> MessageContent {
        var event = epoll_event()
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
            if count == 1, let port = members.withLock({ $0[event.data.u64] }),
               let content = port.tryDequeue() {
                return content
            }
            if count == 0 && deadline.hasPassed {
                throw PortError(.timedOut, "no message arrived on the port set in time")
            }
        }
    }
}
