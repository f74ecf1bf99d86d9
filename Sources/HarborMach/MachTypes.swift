// HarborMach — Darwin's Mach type names and constants, so that code written
// against `Darwin.Mach` and swift-system's `Mach.Port` compiles unchanged.
//
// The types are the ones Darwin's headers give (`natural_t` is 32 bits, a
// context is 64), and each constant has the type Swift imports it with on
// Darwin (`MACH_PORT_NULL` and the `MACH_MSG_TYPE_*` numbers are `Int32`,
// the `MACH_PORT_RIGHT_*` values carry their cast), so a comparison or a
// conversion that compiles here compiles there too.

/// A port name in this process's Mach name space (Darwin: `natural_t`).
public typealias mach_port_name_t = UInt32
/// A port as a task sees it; in user space the same as a name.
public typealias mach_port_t = UInt32
/// The value a guarded receive right is guarded with (Darwin: `mach_vm_address_t`).
public typealias mach_port_context_t = UInt64
/// A receive right's make-send count.
public typealias mach_port_mscount_t = UInt32
/// A count of user references.
public typealias mach_port_urefs_t = UInt32
/// A change in user references.
public typealias mach_port_delta_t = Int32
/// Which kind of right a call is about (`MACH_PORT_RIGHT_*`).
public typealias mach_port_right_t = UInt32
/// How a right is made or moved (`MACH_MSG_TYPE_*`).
public typealias mach_msg_type_name_t = UInt32
/// A Mach call's result (`KERN_*`).
public typealias kern_return_t = Int32
/// Darwin's C boolean.
public typealias boolean_t = Int32

/// The name of this task, the first argument of every `mach_port_*` call.
/// It names no port: calls given another task fail with `KERN_INVALID_TASK`.
public let mach_task_self_: mach_port_t = 0xFFFF_FFFE

/// The null name: no right.
public let MACH_PORT_NULL: Int32 = 0
/// The dead name constant (Darwin code often spells it `0xFFFFFFFF`).
public let MACH_PORT_DEAD: mach_port_name_t = 0xFFFF_FFFF

/// A send right.
public let MACH_PORT_RIGHT_SEND: mach_port_right_t = 0
/// The receive right.
public let MACH_PORT_RIGHT_RECEIVE: mach_port_right_t = 1
/// A send-once right.
public let MACH_PORT_RIGHT_SEND_ONCE: mach_port_right_t = 2
/// A port set (not kept in the name space here: `mach_port_allocate` refuses it).
public let MACH_PORT_RIGHT_PORT_SET: mach_port_right_t = 3
/// A dead name: a send or send-once right whose port is gone.
public let MACH_PORT_RIGHT_DEAD_NAME: mach_port_right_t = 4

/// Moves the receive right.
public let MACH_MSG_TYPE_MOVE_RECEIVE: Int32 = 16
/// Moves a send right.
public let MACH_MSG_TYPE_MOVE_SEND: Int32 = 17
/// Moves a send-once right.
public let MACH_MSG_TYPE_MOVE_SEND_ONCE: Int32 = 18
/// Copies a send right (one more user reference).
public let MACH_MSG_TYPE_COPY_SEND: Int32 = 19
/// Makes a send right from the receive right (raises the make-send count).
public let MACH_MSG_TYPE_MAKE_SEND: Int32 = 20
/// Makes a send-once right from the receive right.
public let MACH_MSG_TYPE_MAKE_SEND_ONCE: Int32 = 21

/// The call did what it was asked.
public let KERN_SUCCESS: kern_return_t = 0
/// A wrong guard value, or an argument out of range.
public let KERN_INVALID_ARGUMENT: kern_return_t = 4
/// The call failed for another reason.
public let KERN_FAILURE: kern_return_t = 5
/// The name is already in use.
public let KERN_NAME_EXISTS: kern_return_t = 13
/// The name denotes no right in this name space.
public let KERN_INVALID_NAME: kern_return_t = 15
/// The task is not `mach_task_self_`.
public let KERN_INVALID_TASK: kern_return_t = 16
/// The name denotes no right of the kind asked for.
public let KERN_INVALID_RIGHT: kern_return_t = 17
/// A value this call does not take (a kind of right or a disposition).
public let KERN_INVALID_VALUE: kern_return_t = 18
/// One more user reference would pass `MACH_PORT_UREFS_MAX`.
public let KERN_UREFS_OVERFLOW: kern_return_t = 19
/// The name is a dead name: its port is gone.
public let KERN_INVALID_CAPABILITY: kern_return_t = 20

/// The most user references one name holds for one kind of right (Mach's
/// `MACH_PORT_UREFS_MAX`); one more fails with `KERN_UREFS_OVERFLOW`.
public let MACH_PORT_UREFS_MAX: mach_port_urefs_t = 0xFFFF
