// HarborMach — the process's one Mach name space, over the Harbor rights it
// holds: the lock around `NameSpaceState`, and the steps that must ask a
// Harbor port something (is it dead, make a right, its counters), which run
// outside that lock.
//
// Lock order: this lock may be held while nothing else is taken; Harbor's
// port locks are only ever taken after it is released, so HarborPorts (which
// never calls back into HarborMach) cannot deadlock with it.
import HarborPorts
import HarborSystem

extension ReceiveBox {
    /// A new Harbor send right.
    func makeSendRight() -> HarborPorts.SendRight { withRight { $0.makeSendRight() } }

    func makeSendOnceRight() -> HarborPorts.SendOnceRight { withRight { $0.makeSendOnceRight() } }

    var madeSendRights: UInt64 { withRight { $0.status.madeSendRights } }
}

extension NameEntry {
    /// Whether the name is a dead name now. Asks the port: call it outside
    /// the lock, on a copy of the entry.
    var sendIsDead: Bool { receive == nil && (send?.isDead ?? false) }
}

/// The name space: every `mach_port_*` call and every `Mach.Port` goes
/// through here.
enum MachNameSpace {
    private static let state = HarborLock(NameSpaceState())

    /// A copy of what the name holds now.
    static func entry(_ name: mach_port_name_t) -> NameEntry? {
        state.withLock { $0[name] }
    }

    /// The name's receive right's box, or why there is none.
    static func receiveBox(_ name: mach_port_name_t) -> (kern_return_t, ReceiveBox?) {
        guard let entry = entry(name) else { return (KERN_INVALID_NAME, nil) }
        guard let box = entry.receive else { return (KERN_INVALID_RIGHT, nil) }
        return (KERN_SUCCESS, box)
    }

    // MARK: Rights in

    static func insertReceive(_ right: consuming HarborPorts.ReceiveRight) -> mach_port_name_t {
        let port = right.name
        let box = ReceiveBox(right)
        return state.withLock { $0.insertReceive(box, port: port) }
    }

    static func insertSend(_ right: HarborPorts.SendRight) -> (kern_return_t, mach_port_name_t) {
        // The right released by coalescing dies as this tuple is destructured:
        // after the lock.
        let (result, name, _) = state.withLock { $0.insertSend(right) }
        return (result, name)
    }

    static func insertSendOnce(_ right: consuming HarborPorts.SendOnceRight) -> mach_port_name_t {
        let box = SendOnceBox(right)
        return state.withLock { $0.insertSendOnce(box) }
    }

    // MARK: Rights made from a receive right

    /// `MACH_MSG_TYPE_MAKE_SEND`: one more user reference under the receive
    /// right's name, and one more in the make-send count.
    static func makeSend(_ name: mach_port_name_t) -> kern_return_t {
        let (result, box) = receiveBox(name)
        guard let box else { return result }
        return insertSend(box.makeSendRight()).0
    }

    /// `MACH_MSG_TYPE_MAKE_SEND_ONCE`: a send-once right under a new name.
    static func makeSendOnce(_ name: mach_port_name_t) -> (kern_return_t, mach_port_name_t) {
        let (result, box) = receiveBox(name)
        guard let box else { return (result, 0) }
        return (KERN_SUCCESS, insertSendOnce(box.makeSendOnceRight()))
    }

    /// `MACH_MSG_TYPE_COPY_SEND`: one more user reference, unless the name
    /// is a dead name (`KERN_INVALID_CAPABILITY`, as Mach).
    static func copySend(_ name: mach_port_name_t) -> kern_return_t {
        guard let entry = entry(name) else { return KERN_INVALID_NAME }
        guard entry.send != nil else {
            return entry.sendOnce?.isDead == true ? KERN_INVALID_CAPABILITY : KERN_INVALID_RIGHT
        }
        if entry.sendIsDead { return KERN_INVALID_CAPABILITY }
        return state.withLock { $0.adjustSend(name, by: 1) }.0
    }

    // MARK: References

    static func deallocate(_ name: mach_port_name_t) -> kern_return_t {
        // Mach: the null and dead names hold nothing, and letting them go succeeds.
        if name == mach_port_name_t(MACH_PORT_NULL) || name == MACH_PORT_DEAD { return KERN_SUCCESS }
        return state.withLock { $0.deallocate(name) }.0
    }

    static func modRefs(_ name: mach_port_name_t, _ right: mach_port_right_t, _ delta: mach_port_delta_t) -> kern_return_t {
        guard let entry = entry(name) else { return KERN_INVALID_NAME }
        switch right {
        case MACH_PORT_RIGHT_RECEIVE:
            guard entry.receive != nil else { return KERN_INVALID_RIGHT }
            guard delta == -1 else { return delta == 0 ? KERN_SUCCESS : KERN_INVALID_VALUE }
            // A guarded right can only be destroyed with its guard (mach_port_destruct).
            let (result, _) = state.withLock { $0.removeReceive(name, context: 0) }
            return result == KERN_INVALID_ARGUMENT ? KERN_INVALID_RIGHT : result
        case MACH_PORT_RIGHT_SEND_ONCE:
            guard let once = entry.sendOnce, !once.isDead else { return KERN_INVALID_RIGHT }
            guard delta == -1 else { return delta == 0 ? KERN_SUCCESS : KERN_INVALID_VALUE }
            _ = state.withLock { $0.removeSendOnce(name) }
            return KERN_SUCCESS
        case MACH_PORT_RIGHT_SEND, MACH_PORT_RIGHT_DEAD_NAME:
            let wantsDead = right == MACH_PORT_RIGHT_DEAD_NAME
            if wantsDead, let once = entry.sendOnce, once.isDead {
                guard delta == -1 else { return delta == 0 ? KERN_SUCCESS : KERN_INVALID_VALUE }
                _ = state.withLock { $0.removeSendOnce(name) }
                return KERN_SUCCESS
            }
            guard entry.send != nil, entry.sendIsDead == wantsDead else { return KERN_INVALID_RIGHT }
            return state.withLock { $0.adjustSend(name, by: Int64(delta)) }.0
        case MACH_PORT_RIGHT_PORT_SET:
            return KERN_INVALID_RIGHT
        default:
            return KERN_INVALID_VALUE
        }
    }

    static func refs(_ name: mach_port_name_t, _ right: mach_port_right_t) -> (kern_return_t, mach_port_urefs_t) {
        guard let entry = entry(name) else { return (KERN_INVALID_NAME, 0) }
        let dead = entry.sendIsDead
        let onceDead = entry.sendOnce?.isDead
        switch right {
        case MACH_PORT_RIGHT_RECEIVE: return (KERN_SUCCESS, entry.receive == nil ? 0 : 1)
        case MACH_PORT_RIGHT_SEND: return (KERN_SUCCESS, entry.send != nil && !dead ? entry.sendRefs : 0)
        case MACH_PORT_RIGHT_SEND_ONCE: return (KERN_SUCCESS, onceDead == false ? 1 : 0)
        case MACH_PORT_RIGHT_DEAD_NAME:
            if entry.send != nil && dead { return (KERN_SUCCESS, entry.sendRefs) }
            return (KERN_SUCCESS, onceDead == true ? 1 : 0)
        case MACH_PORT_RIGHT_PORT_SET: return (KERN_SUCCESS, 0)
        default: return (KERN_INVALID_VALUE, 0)
        }
    }

    // MARK: Guards, destruction, make-send count

    static func setGuard(_ name: mach_port_name_t, to value: mach_port_context_t?,
                         expecting old: mach_port_context_t?) -> kern_return_t {
        state.withLock { $0.setGuard(name, to: value, expecting: old) }
    }

    /// `mach_port_destruct`: the receive right dies (if `context` is its
    /// guard) after `sendDelta` send references go.
    static func destruct(_ name: mach_port_name_t, sendDelta: mach_port_delta_t,
                         context: mach_port_context_t) -> kern_return_t {
        guard sendDelta <= 0 else { return KERN_INVALID_VALUE }
        let (result, box, released) = state.withLock { space -> (kern_return_t, ReceiveBox?, Released) in
            guard let entry = space[name] else { return (KERN_INVALID_NAME, nil, Released()) }
            guard entry.receive != nil else { return (KERN_INVALID_RIGHT, nil, Released()) }
            guard (entry.guardValue ?? 0) == context else { return (KERN_INVALID_ARGUMENT, nil, Released()) }
            var released = Released()
            if sendDelta < 0 {
                let (adjusted, dropped) = space.adjustSend(name, by: Int64(sendDelta))
                guard adjusted == KERN_SUCCESS else { return (adjusted, nil, Released()) }
                released = dropped
            }
            let (removed, box) = space.removeReceive(name, context: context)
            return (removed, box, released)
        }
        // The port dies here, outside the lock, unless a borrower still
        // holds the box (a receive in progress): then when it returns.
        withExtendedLifetime((box, released)) {}
        return result
    }

    static func makeSendCount(_ name: mach_port_name_t) -> (kern_return_t, mach_port_mscount_t) {
        guard let entry = entry(name) else { return (KERN_INVALID_NAME, 0) }
        guard let box = entry.receive else { return (KERN_INVALID_RIGHT, 0) }
        return (KERN_SUCCESS, mach_port_mscount_t(truncatingIfNeeded: box.madeSendRights) &+ entry.makeSendOffset)
    }

    static func setMakeSendCount(_ name: mach_port_name_t, _ count: mach_port_mscount_t) -> kern_return_t {
        let (result, box) = receiveBox(name)
        guard let box else { return result }
        let made = mach_port_mscount_t(truncatingIfNeeded: box.madeSendRights)
        state.withLock { $0.setMakeSendOffset(name, count &- made) }
        return KERN_SUCCESS
    }

    // MARK: Rights out, as Harbor rights

    /// Takes the receive right out of the name space (its send rights stay).
    static func takeReceive(_ name: mach_port_name_t, context: mach_port_context_t) -> HarborPorts.ReceiveRight? {
        let (_, box) = state.withLock { $0.removeReceive(name, context: context) }
        return box?.take()
    }

    static func takeSendOnce(_ name: mach_port_name_t) -> HarborPorts.SendOnceRight? {
        state.withLock { $0.removeSendOnce(name) }?.take()
    }
}
