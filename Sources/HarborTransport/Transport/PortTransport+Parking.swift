// Harbor — a port's transport, receiving at a full queue: a connection whose
// message parked (HarborPorts' ParkedMessages.swift) is read no further
// until its parked messages have joined the queue.
//
// Admission decides when (`PortCore.admit`, under the port's lock); the
// transport only takes the connection out of the port's readiness set and
// puts it back, so readiness stays exact: a paused connection's waiting
// packets wake nobody. Both happen under the port's lock, so a pause and a
// resume never cross.
import HarborSystem
import HarborPorts

extension PortTransport {
    /// Whether connection `token` is paused (a pump that collected its event
    /// before the pause does not read it). One load of a private word while
    /// nothing is parked.
    func isPaused(_ token: UInt64) -> Bool {
        counter.parked > 0 && table.withLockedValue { $0.paused.contains(token) }
    }

    /// Stops reading connection `token` (the port's lock held): out of the
    /// readiness set, so the packets waiting in it wake nobody.
    package func pauseReading(_ token: UInt64) {
        table.withLockedValue { table in
            guard let connection = table.connections[token] else { return }
            table.paused.insert(token)
            EpollControl.remove(epollFD, connection.socket.rawValue)
        }
    }

    /// Reads connection `token` again (the port's lock held).
    package func resumeReading(_ token: UInt64) {
        table.withLockedValue { table in
            table.paused.remove(token)
            guard !table.isShutDown, let connection = table.connections[token] else { return }
            // Level-triggered: packets that waited meanwhile wake the set at once.
            try? EpollControl.add(epollFD, connection.socket.rawValue, events: .readable, token: token)
        }
    }
}
