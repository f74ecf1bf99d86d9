// HarborMach — the `mach_port_*` calls that manage names, over Harbor's
// rights, for code that mixes swift-system's `Mach.Port` with raw names (as
// swift-system's own tests do).
//
// What is here: allocating a receive right, making, copying and releasing
// rights and user references, reading them, guards, the make-send count.
// What is not: port sets (use Harbor's `PortSet`), renaming (`poly` must be
// `name`), `mach_msg` (send and receive through `Mach.Port`'s Harbor forms),
// notifications (`withHarborRight` then Harbor's `request…Notification`).
// Results are `KERN_*` codes as Mach gives them; Darwin's guard exceptions
// (which kill the process) are `KERN_INVALID_ARGUMENT` or
// `KERN_INVALID_RIGHT` here.
import HarborPorts

/// Gives this task a new port and its receive right, unguarded.
/// Only `MACH_PORT_RIGHT_RECEIVE` is taken (`KERN_INVALID_VALUE` otherwise).
public func mach_port_allocate(
    _ task: mach_port_t, _ right: mach_port_right_t, _ name: UnsafeMutablePointer<mach_port_name_t>
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    guard right == MACH_PORT_RIGHT_RECEIVE else { return KERN_INVALID_VALUE }
    name.pointee = MachNameSpace.insertReceive(HarborPorts.ReceiveRight())
    return KERN_SUCCESS
}

/// Gives the task a right under `name`, made or copied from what `poly`
/// names: `MACH_MSG_TYPE_MAKE_SEND` (from the receive right; raises the
/// make-send count) or `MACH_MSG_TYPE_COPY_SEND` (from a send right;
/// `KERN_INVALID_CAPABILITY` on a dead name). `poly` must be `name`: a port's
/// send rights live under its receive right's name, as Mach coalesces them.
public func mach_port_insert_right(
    _ task: mach_port_t, _ name: mach_port_name_t, _ poly: mach_port_t, _ polyPoly: mach_msg_type_name_t
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    guard poly == name else { return KERN_INVALID_VALUE }
    switch Int32(bitPattern: polyPoly) {
    case MACH_MSG_TYPE_MAKE_SEND: return MachNameSpace.makeSend(name)
    case MACH_MSG_TYPE_COPY_SEND: return MachNameSpace.copySend(name)
    default: return KERN_INVALID_VALUE
    }
}

/// Makes a right from the receive right `name` and hands it out under a
/// name of its own. Only `MACH_MSG_TYPE_MAKE_SEND_ONCE` is taken: the new
/// send-once right's name goes to `poly` and `MACH_MSG_TYPE_MOVE_SEND_ONCE`
/// to `polyPoly`.
public func mach_port_extract_right(
    _ task: mach_port_t, _ name: mach_port_name_t, _ msgtName: mach_msg_type_name_t,
    _ poly: UnsafeMutablePointer<mach_port_t>, _ polyPoly: UnsafeMutablePointer<mach_msg_type_name_t>
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    guard Int32(bitPattern: msgtName) == MACH_MSG_TYPE_MAKE_SEND_ONCE else { return KERN_INVALID_VALUE }
    let (result, made) = MachNameSpace.makeSendOnce(name)
    guard result == KERN_SUCCESS else { return result }
    poly.pointee = made
    polyPoly.pointee = mach_msg_type_name_t(MACH_MSG_TYPE_MOVE_SEND_ONCE)
    return KERN_SUCCESS
}

/// Releases one user reference of the send right, send-once right or dead
/// name `name`. The null and dead names succeed and do nothing, as in Mach.
public func mach_port_deallocate(_ task: mach_port_t, _ name: mach_port_name_t) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    return MachNameSpace.deallocate(name)
}

/// Adds `delta` user references of one kind of right. A receive or
/// send-once right only goes (-1); a guarded receive right cannot be
/// destroyed this way (`KERN_INVALID_RIGHT`; Darwin raises a guard exception).
public func mach_port_mod_refs(
    _ task: mach_port_t, _ name: mach_port_name_t, _ right: mach_port_right_t, _ delta: mach_port_delta_t
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    return MachNameSpace.modRefs(name, right, delta)
}

/// Reads the user references `name` holds of one kind of right: 0 when it
/// holds none of that kind, `KERN_INVALID_NAME` when it names nothing.
public func mach_port_get_refs(
    _ task: mach_port_t, _ name: mach_port_name_t, _ right: mach_port_right_t,
    _ refs: UnsafeMutablePointer<mach_port_urefs_t>
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    let (result, count) = MachNameSpace.refs(name, right)
    if result == KERN_SUCCESS { refs.pointee = count }
    return result
}

/// Guards the receive right `name` with `guardValue`: from then on only
/// `mach_port_destruct` or `mach_port_unguard` with that value touch it.
/// `strict` is accepted and has no further effect.
public func mach_port_guard(
    _ task: mach_port_t, _ name: mach_port_name_t, _ guardValue: mach_port_context_t, _ strict: boolean_t
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    return MachNameSpace.setGuard(name, to: guardValue, expecting: nil)
}

/// Removes the guard `guardValue` from the receive right `name`.
public func mach_port_unguard(
    _ task: mach_port_t, _ name: mach_port_name_t, _ guardValue: mach_port_context_t
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    return MachNameSpace.setGuard(name, to: nil, expecting: guardValue)
}

/// Destroys the receive right `name`, guarded with `guardValue` (zero when
/// unguarded), after releasing `-srdelta` of its send references. Send
/// references that remain become a dead name.
public func mach_port_destruct(
    _ task: mach_port_t, _ name: mach_port_name_t, _ srdelta: mach_port_delta_t, _ guardValue: mach_port_context_t
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    return MachNameSpace.destruct(name, sendDelta: srdelta, context: guardValue)
}

/// Sets the make-send count of the receive right `name`.
public func mach_port_set_mscount(
    _ task: mach_port_t, _ name: mach_port_name_t, _ mscount: mach_port_mscount_t
) -> kern_return_t {
    guard task == mach_task_self_ else { return KERN_INVALID_TASK }
    return MachNameSpace.setMakeSendCount(name, mscount)
}
