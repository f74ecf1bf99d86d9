// Harbor — port sets: one receive over many ports.
import HarborSystem

/// A set of ports received from as one (Mach: a port set).
///
/// A port belongs to at most one set; inserting it into another moves it
/// (Mach's `mach_port_move_member`). The set is an epoll set over its
/// members' readiness descriptors, so the set is itself a descriptor that a
/// run loop can wait on. A port leaves its set when it dies.
///
/// **Thread safety:** any thread.
public struct PortSet: ~Copyable, Sendable {
    package let core: PortSetCore

    /// Creates an empty set. Costs one epoll descriptor.
    /// - Throws: ``PortError/Code/resourceShortage`` when out of descriptors.
    public init() throws(PortError) {
        do { core = try PortSetCore() } catch { throw PortError(error, "creating a port set") }
    }

    /// Adds the port of `receive`, moving it out of any set it was in.
    /// **Mach equivalent:** `mach_port_insert_member` / `mach_port_move_member`.
    public func insert(_ receive: borrowing ReceiveRight) throws(PortError) {
        let port = receive.core
        let fd = try port.readinessDescriptor()
        if let previous = port.join(core), previous !== core {
            previous.removeMember(port, descriptor: fd)
        }
        do { try core.addMember(port, descriptor: fd) } catch {
            _ = port.join(nil)
            throw PortError(error, "adding \(port.name) to a port set")
        }
    }

    /// Takes the port of `receive` out of this set; no effect if it is not in it.
    /// **Mach equivalent:** `mach_port_extract_member`.
    public func remove(_ receive: borrowing ReceiveRight) {
        let port = receive.core
        guard port.set === core, let fd = try? port.readinessDescriptor() else { return }
        _ = port.join(nil)
        core.removeMember(port, descriptor: fd)
    }

    /// Whether the port of `receive` is in this set.
    public func contains(_ receive: borrowing ReceiveRight) -> Bool {
        core.contains(receive.name)
    }

    /// The names of the member ports, in creation order.
    public var members: [PortName] { core.memberNames }

    /// Takes the next message from any member; ``MessageTrailer/port`` says which.
    /// - Parameter timeout: `nil` waits as long as it takes; `.zero` only looks.
    /// - Throws: ``PortError/Code/timedOut``.
    public func receive(timeout: Duration? = nil) throws(PortError) -> Message {
        Message(content: try core.dequeue(deadline: WaitDeadline(timeout: timeout)))
    }
}
