// HarborMach — swift-system's `Mach.Port<RightType>` on Linux, over Harbor's
// rights: the same types, members, `~Copyable` rules and failures, so that
// code written against `import System` on Darwin builds here by importing
// `HarborMach` instead (Docs/MachPort.md).
//
// As on Darwin, a `Mach.Port` is only a name (and, for a receive right, its
// guard value): the right itself sits in this process's Mach name space
// (`MachNameSpace`), which holds Harbor's `ReceiveRight`, `SendRight` and
// `SendOnceRight`. Trivial stored properties are what let `relinquish()`
// end a port with `discard self`.

/// A kind of Mach port right: `Mach.ReceiveRight`, `Mach.SendRight` or
/// `Mach.SendOnceRight`, the type argument of `Mach.Port`.
public protocol MachPortRight {}

/// Mach port rights as `~Copyable` values (swift-system's `Mach`).
public enum Mach {
    /// The same protocol under the name the `Mach` namespace suggests.
    public typealias PortRight = MachPortRight

    /// One right to a port, by name, owned by this value.
    ///
    /// **When it dies.** A `Port` is `~Copyable`, and Swift ends its
    /// lifetime after its *last use*, not at the end of its scope: a
    /// `let port = Mach.Port<Mach.ReceiveRight>()` that is not used after
    /// line 3 may be destroyed right after line 3, and with it the port
    /// (its queue, and any send rights turning into dead names). A name
    /// taken out with `withBorrowedName` does not keep it alive. To hold a
    /// right until a point, use it there: `withExtendedLifetime(port) { … }`
    /// around the work, or `_ = consume port` (or `relinquish()`) where it
    /// should end.
    ///
    /// `deinit` releases the right: a receive right is destroyed with its
    /// guard (`mach_port_destruct`), a send or send-once right loses a user
    /// reference (`mach_port_deallocate`).
    public struct Port<RightType: MachPortRight>: ~Copyable, Sendable {
        @usableFromInline internal var _name: mach_port_name_t
        @usableFromInline internal var _context: mach_port_context_t

        /// Takes ownership of the right that `name` holds in this process's
        /// name space.
        ///
        /// Traps if `name` is `MACH_PORT_NULL`, or `MACH_PORT_DEAD` for a
        /// receive right. A receive right is guarded with a random value, and
        /// traps if it cannot be (`name` holds no receive right, or it is
        /// guarded already), as on Darwin. If `name` holds a right of another
        /// kind than `RightType`, the failure comes when the port is released.
        public init(name: mach_port_name_t) {
            precondition(name != mach_port_name_t(MACH_PORT_NULL), "Mach.Port cannot be initialized with MACH_PORT_NULL")
            _name = name
            if RightType.self == ReceiveRight.self {
                precondition(name != MACH_PORT_DEAD, "Receive rights cannot be dead names")
                let secret = mach_port_context_t.random(in: 1 ... .max)
                _machPrecondition(mach_port_guard(mach_task_self_, name, secret, 0))
                _context = secret
            } else {
                _context = 0
            }
        }

        /// Lends the port's name to `body`, which must not release the right.
        /// The name grants nothing once this port is gone.
        public func withBorrowedName<ReturnType>(body: (mach_port_name_t) -> ReturnType) -> ReturnType {
            body(_name)
        }

        deinit {
            if RightType.self == ReceiveRight.self {
                _machPrecondition(mach_port_destruct(mach_task_self_, _name, 0, _context))
            } else {
                _machPrecondition(mach_port_deallocate(mach_task_self_, _name))
            }
        }
    }

    /// Why a `Mach.Port` operation failed.
    public enum PortRightError: Error {
        /// The right is a dead name: the port's receive right was destroyed
        /// (or its process died).
        case deadName
    }

    /// The type argument of a port's one receive right.
    public struct ReceiveRight: MachPortRight {}

    /// The type argument of a send right.
    public struct SendRight: MachPortRight {}

    /// The type argument of a send-once right: it sends one message, makes
    /// no other right, and if it dies unused its port is told so (a
    /// send-once notification).
    public struct SendOnceRight: MachPortRight {}
}

/// Traps unless a name-space call that cannot fail for a well-formed
/// `Mach.Port` succeeded: a failure means the program released the right
/// behind the port's back (Darwin traps the same way).
@usableFromInline
func _machPrecondition(_ result: kern_return_t, file: StaticString = #file, line: UInt = #line) {
    precondition(result == KERN_SUCCESS, "Mach call failed: kern_return_t \(result)", file: file, line: line)
}

extension Mach.Port where RightType == Mach.ReceiveRight {
    /// Takes ownership of a receive right already guarded with `context`.
    /// Traps if `name` is `MACH_PORT_NULL`.
    public init(name: mach_port_name_t, context: mach_port_context_t) {
        precondition(name != mach_port_name_t(MACH_PORT_NULL), "Mach.Port cannot be initialized with MACH_PORT_NULL")
        _name = name
        _context = context
    }

    /// Creates a new port and owns its receive right, guarded.
    /// Costs one small allocation; no system call.
    public init() {
        var name = mach_port_name_t(MACH_PORT_NULL)
        _machPrecondition(mach_port_allocate(mach_task_self_, MACH_PORT_RIGHT_RECEIVE, &name))
        self.init(name: name)
    }

    /// Gives up ownership: returns the name and guard value, and the right
    /// stays in the name space, guarded, until someone destructs it.
    public consuming func relinquish() -> (name: mach_port_name_t, context: mach_port_context_t) {
        let owned = (name: _name, context: _context)
        discard self
        return owned
    }

    /// Removes the guard and gives up ownership of the receive right.
    public consuming func unguardAndRelinquish() -> mach_port_name_t {
        let (name, context) = relinquish()
        _machPrecondition(mach_port_unguard(mach_task_self_, name, context))
        return name
    }

    /// Lends the name and the guard value to `body`.
    public func withBorrowedName<ReturnType>(body: (mach_port_name_t, mach_port_context_t) -> ReturnType) -> ReturnType {
        body(_name, _context)
    }

    /// Makes a send-once right, under a name of its own. The make-send
    /// count does not change.
    public func makeSendOnceRight() -> Mach.Port<Mach.SendOnceRight> {
        var made = mach_port_name_t(MACH_PORT_NULL)
        var kind = mach_msg_type_name_t(0)
        _machPrecondition(mach_port_extract_right(
            mach_task_self_, _name, mach_msg_type_name_t(MACH_MSG_TYPE_MAKE_SEND_ONCE), &made, &kind))
        return Mach.Port(name: made)
    }

    /// Makes a send right, which shares this port's name (a name holds all
    /// of a process's send rights to one port, counted in user
    /// references). The make-send count goes up by one.
    public func makeSendRight() -> Mach.Port<Mach.SendRight> {
        _machPrecondition(mach_port_insert_right(
            mach_task_self_, _name, _name, mach_msg_type_name_t(MACH_MSG_TYPE_MAKE_SEND)))
        return Mach.Port(name: _name)
    }

    /// The number of send rights made from this receive right, settable.
    /// Harbor counts them on the port; a value set here is kept by this
    /// process's name space, so it is lost if the right is taken out as a
    /// Harbor right (`takeHarborRight()`).
    public var makeSendCount: mach_port_mscount_t {
        get {
            let (result, count) = MachNameSpace.makeSendCount(_name)
            _machPrecondition(result)
            return count
        }
        set {
            _machPrecondition(mach_port_set_mscount(mach_task_self_, _name, newValue))
        }
    }
}

extension Mach.Port where RightType == Mach.SendRight {
    /// Gives up ownership: returns the name, whose user reference stays
    /// in the name space.
    public consuming func relinquish() -> mach_port_name_t {
        let name = _name
        discard self
        return name
    }

    /// Another send right to the same port (one more user reference under
    /// the same name). The make-send count does not change.
    /// - Throws: `Mach.PortRightError.deadName` if the port is gone.
    public func copySendRight() throws -> Mach.Port<Mach.SendRight> {
        let result = mach_port_insert_right(
            mach_task_self_, _name, _name, mach_msg_type_name_t(MACH_MSG_TYPE_COPY_SEND))
        if result == KERN_INVALID_NAME || result == KERN_INVALID_CAPABILITY {
            throw Mach.PortRightError.deadName
        }
        _machPrecondition(result)
        return Mach.Port(name: _name)
    }
}

extension Mach.Port where RightType == Mach.SendOnceRight {
    /// Gives up ownership: returns the name, whose right stays in the name space.
    public consuming func relinquish() -> mach_port_name_t {
        let name = _name
        discard self
        return name
    }
}
