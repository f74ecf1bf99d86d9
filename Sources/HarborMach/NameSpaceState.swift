// HarborMach — the bookkeeping of this process's Mach name space: which
// integer name holds which Harbor right, and how many user references.
//
// A pure struct, as the rest of Harbor keeps its state machines: it never
// calls into a port. Whatever a Harbor port must be asked (is it dead? make
// a right) is asked by `MachNameSpace` outside the lock, and rights that
// leave the table come back as `Released`, to die after the lock is let go
// (a right's death can send notifications).
import HarborPorts

/// A receive right held by the name space, as the token object that is the
/// right (a `ReceiveRight` value is only a wrapper around it). A class, so a
/// caller using the right outside the lock (a blocking receive) keeps the
/// port alive until it is done, even if the name is destroyed meanwhile;
/// immutable, so any thread may read it.
final class ReceiveBox: Sendable {
    let token: ReceiveRightToken

    init(_ right: consuming HarborPorts.ReceiveRight) { token = right.token }

    /// Lends the right to `body`.
    func withRight<Result: ~Copyable, Failure: Error>(
        _ body: (borrowing HarborPorts.ReceiveRight) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(HarborPorts.ReceiveRight(token: token))
    }

    /// The right itself, for the one owner taking it out of the name space
    /// (after the box has left the table).
    func take() -> HarborPorts.ReceiveRight { HarborPorts.ReceiveRight(token: token) }
}

/// A send-once right held by the name space, under a name of its own.
final class SendOnceBox: Sendable {
    let token: SendOnceToken

    init(_ right: consuming HarborPorts.SendOnceRight) { token = right.token }

    /// The port it sends to.
    var port: PortName { token.port.name }

    /// Whether its port is gone (the name is a dead name). Asks the port:
    /// call it outside the lock.
    var isDead: Bool { token.port.isDead }

    /// The right itself, for the one owner taking it out (after the box has
    /// left the table).
    func take() -> HarborPorts.SendOnceRight { HarborPorts.SendOnceRight(token: token) }
}

/// What one name holds. Mach's rules: a port's receive and send rights
/// share one name in a task; each send-once right has a name of its own;
/// when the port dies, the send rights' name becomes a dead name with the
/// same user references.
struct NameEntry {
    /// The Harbor port this name is about.
    let port: PortName
    var receive: ReceiveBox?
    /// The guard value of the receive right; nil when unguarded.
    var guardValue: mach_port_context_t?
    /// One Harbor send right stands for all of this name's user references.
    var send: HarborPorts.SendRight?
    /// User references of `send`, or of the dead name it became.
    var sendRefs: mach_port_urefs_t = 0
    var sendOnce: SendOnceBox?
    /// Added to Harbor's count of send rights made, so that
    /// `mach_port_set_mscount` can set it (Harbor's own count only grows).
    var makeSendOffset: mach_port_mscount_t = 0

    var isEmpty: Bool { receive == nil && send == nil && sendOnce == nil }
}

/// Rights that left the table, to be dropped once the lock is released.
struct Released {
    var receive: ReceiveBox?
    var send: HarborPorts.SendRight?
    var sendOnce: SendOnceBox?
}

/// The name table itself.
struct NameSpaceState {
    private(set) var entries: [mach_port_name_t: NameEntry] = [:]
    /// The name a port's receive and send rights share, for coalescing.
    private var byPort: [PortName: mach_port_name_t] = [:]
    private var nextFresh: mach_port_name_t = NameSpaceState.freshNames.lowerBound

    /// Names not derived from a port's number: send-once rights, and ports
    /// whose number does not fit below this range or whose name is taken.
    static let freshNames: Range<mach_port_name_t> = 0x8000_0000 ..< 0xFFFF_FFF0

    subscript(name: mach_port_name_t) -> NameEntry? { entries[name] }

    /// The name of the port's receive and send rights, if it has one now.
    func name(of port: PortName) -> mach_port_name_t? { byPort[port] }

    // MARK: Entering rights

    mutating func insertReceive(_ box: ReceiveBox, port: PortName) -> mach_port_name_t {
        let name = coalescedName(for: port)
        entries[name, default: NameEntry(port: port)].receive = box
        return name
    }

    /// Adds one user reference of a send right to `right`'s port, under the
    /// name its receive or send rights already have, or a new one.
    mutating func insertSend(_ right: HarborPorts.SendRight) -> (kern_return_t, mach_port_name_t, Released) {
        let name = coalescedName(for: right.name)
        var entry = entries[name, default: NameEntry(port: right.name)]
        guard entry.sendRefs < MACH_PORT_UREFS_MAX else {
            return (KERN_UREFS_OVERFLOW, name, Released(send: right))
        }
        var released = Released()
        if entry.send == nil { entry.send = right } else { released.send = right }
        entry.sendRefs += 1
        entries[name] = entry
        return (KERN_SUCCESS, name, released)
    }

    mutating func insertSendOnce(_ box: SendOnceBox) -> mach_port_name_t {
        let name = freshName()
        var entry = NameEntry(port: box.port)
        entry.sendOnce = box
        entries[name] = entry
        return name
    }

    // MARK: Changing references

    /// Adds `delta` user references to the name's send right or the dead
    /// name it became (the caller found out which, outside the lock).
    mutating func adjustSend(_ name: mach_port_name_t, by delta: Int64) -> (kern_return_t, Released) {
        guard var entry = entries[name] else { return (KERN_INVALID_NAME, Released()) }
        guard entry.send != nil else { return (KERN_INVALID_RIGHT, Released()) }
        let refs = Int64(entry.sendRefs) + delta
        guard refs >= 0 else { return (KERN_INVALID_VALUE, Released()) }
        guard refs <= Int64(MACH_PORT_UREFS_MAX) else { return (KERN_UREFS_OVERFLOW, Released()) }
        entry.sendRefs = mach_port_urefs_t(refs)
        var released = Released()
        if refs == 0 { released.send = entry.send; entry.send = nil }
        store(entry, at: name)
        return (KERN_SUCCESS, released)
    }

    /// `mach_port_deallocate`: one user reference of a send right, send-once
    /// right or dead name goes.
    mutating func deallocate(_ name: mach_port_name_t) -> (kern_return_t, Released) {
        guard var entry = entries[name] else { return (KERN_INVALID_NAME, Released()) }
        if let once = entry.sendOnce {
            entry.sendOnce = nil
            store(entry, at: name)
            return (KERN_SUCCESS, Released(sendOnce: once))
        }
        guard entry.send != nil else { return (KERN_INVALID_RIGHT, Released()) }
        return adjustSend(name, by: -1)
    }

    /// Takes the name's send-once right out of the table.
    mutating func removeSendOnce(_ name: mach_port_name_t) -> SendOnceBox? {
        guard var entry = entries[name], let once = entry.sendOnce else { return nil }
        entry.sendOnce = nil
        store(entry, at: name)
        return once
    }

    /// Takes the receive right out of the table if `context` is its guard
    /// (or it is unguarded and `context` is zero). The name stays if it also
    /// holds send rights, which become a dead name when the port dies.
    mutating func removeReceive(_ name: mach_port_name_t, context: mach_port_context_t) -> (kern_return_t, ReceiveBox?) {
        guard var entry = entries[name] else { return (KERN_INVALID_NAME, nil) }
        guard let box = entry.receive else { return (KERN_INVALID_RIGHT, nil) }
        guard (entry.guardValue ?? 0) == context else { return (KERN_INVALID_ARGUMENT, nil) }
        entry.receive = nil
        entry.guardValue = nil
        entry.makeSendOffset = 0
        store(entry, at: name)
        return (KERN_SUCCESS, box)
    }

    // MARK: Guards and counters

    mutating func setGuard(_ name: mach_port_name_t, to value: mach_port_context_t?, expecting old: mach_port_context_t?) -> kern_return_t {
        guard var entry = entries[name] else { return KERN_INVALID_NAME }
        guard entry.receive != nil else { return KERN_INVALID_RIGHT }
        guard entry.guardValue == old else { return KERN_INVALID_ARGUMENT }
        entry.guardValue = value
        entries[name] = entry
        return KERN_SUCCESS
    }

    mutating func setMakeSendOffset(_ name: mach_port_name_t, _ offset: mach_port_mscount_t) {
        entries[name]?.makeSendOffset = offset
    }

    // MARK: Names

    /// Stores `entry`, or frees its name when it holds nothing any more.
    private mutating func store(_ entry: NameEntry, at name: mach_port_name_t) {
        if entry.isEmpty {
            entries[name] = nil
            if byPort[entry.port] == name { byPort[entry.port] = nil }
        } else {
            entries[name] = entry
        }
    }

    /// A port's shared name: the one it has, else its Harbor number when
    /// that fits below the fresh range and is free (so a port's Mach name
    /// and its `PortName` agree in logs), else a fresh one.
    private mutating func coalescedName(for port: PortName) -> mach_port_name_t {
        if let name = byPort[port] { return name }
        let name: mach_port_name_t
        if port.rawValue > 0, port.rawValue < UInt64(Self.freshNames.lowerBound),
           entries[mach_port_name_t(port.rawValue)] == nil {
            name = mach_port_name_t(port.rawValue)
        } else {
            name = freshName()
        }
        byPort[port] = name
        return name
    }

    private mutating func freshName() -> mach_port_name_t {
        while true {
            let name = nextFresh
            nextFresh = name + 1 == Self.freshNames.upperBound ? Self.freshNames.lowerBound : name + 1
            if entries[name] == nil { return name }
        }
    }
}
