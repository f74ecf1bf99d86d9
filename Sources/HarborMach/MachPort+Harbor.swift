// HarborMach — a `Mach.Port` and Harbor's rights, both ways, and messages
// sent and received through a `Mach.Port` (Harbor's `mach_msg`).
//
// Harbor additions, not in swift-system: on Darwin the same code would call
// `mach_msg` on the name. Moving a right into a Harbor `Message` is done by
// taking it out as a Harbor right (`takeHarborRight()`, `copyHarborRight()`)
// and `attach`ing it; a right taken from a received message enters the name
// space with `Mach.Port(_:)`.
import HarborPorts

extension Mach.Port where RightType == Mach.ReceiveRight {
    /// Puts a Harbor receive right into the name space and owns it, guarded.
    /// Its name is the one this process's send rights to the port already
    /// have, else the port's `PortName` number when that is free and below
    /// 2^31, else a fresh one.
    public init(_ right: consuming HarborPorts.ReceiveRight) {
        self.init(name: MachNameSpace.insertReceive(right))
    }

    /// Ends this port's ownership and hands the receive right back as a
    /// Harbor right, which can be moved in a message (`attach`) or served
    /// by a run loop. The name keeps this process's send rights, if any.
    /// A make-send count set through `makeSendCount` is not carried.
    public consuming func takeHarborRight() -> HarborPorts.ReceiveRight {
        let (name, context) = relinquish()
        guard let right = MachNameSpace.takeReceive(name, context: context) else {
            preconditionFailure("Mach.Port: the receive right \(name) was released behind the port's back")
        }
        return right
    }

    /// Lends the Harbor receive right to `body`: its `PortName`, status,
    /// notifications, readiness descriptor. The port lives at least until
    /// `body` returns, even if its name is destroyed meanwhile.
    public func withHarborRight<Result: ~Copyable, Failure: Error>(
        _ body: (borrowing HarborPorts.ReceiveRight) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, box) = MachNameSpace.receiveBox(_name)
        _machPrecondition(result)
        guard let box else { preconditionFailure("Mach.Port: no receive right under \(_name)") }
        // The box, kept by this local, keeps the port alive while `body` runs.
        return try box.withRight(body)
    }

    /// Takes the next message, waiting up to `timeout` (`nil`: as long as it
    /// takes). Mach: `mach_msg(MACH_RCV_MSG)`.
    /// - Throws: `PortError` with `.timedOut` when none came in time.
    public func receive(timeout: Duration? = nil) throws(PortError) -> Message {
        try withHarborRight { (right) throws(PortError) in try right.receive(timeout: timeout) }
    }

    /// Takes the next message if one waits; never blocks.
    public func tryReceive() -> Message? {
        withHarborRight { $0.tryReceive() }
    }
}

extension Mach.Port where RightType == Mach.SendRight {
    /// Puts a Harbor send right into the name space as one more user
    /// reference under the port's name, and owns that reference.
    /// Traps past `MACH_PORT_UREFS_MAX` references, as Mach fails.
    public init(_ right: HarborPorts.SendRight) {
        let (result, name) = MachNameSpace.insertSend(right)
        _machPrecondition(result)
        self.init(name: name)
    }

    /// A Harbor send right to the same port, for `Message.attach` (Mach's
    /// `MACH_MSG_TYPE_COPY_SEND`); this port keeps its reference.
    /// - Throws: `Mach.PortRightError.deadName` if the port is gone.
    public func copyHarborRight() throws(Mach.PortRightError) -> HarborPorts.SendRight {
        guard let entry = MachNameSpace.entry(_name), let send = entry.send, !entry.sendIsDead else {
            throw .deadName
        }
        return send
    }

    /// Queues `message` on the port (Mach: `mach_msg(MACH_SEND_MSG)`).
    /// - Parameters:
    ///   - message: the message, consumed; a failed send gives it back in the error.
    ///   - timeout: how long to wait for room: `nil` as long as it
    ///     takes, `.zero` tries once.
    /// - Throws: `PortError` (`.deadName`, `.queueFull`, `.timedOut`, …),
    ///   holding the message.
    public func send(_ message: consuming Message, timeout: Duration? = nil) throws(PortError) {
        guard let send = MachNameSpace.entry(_name)?.send else {
            // A name holding no send right is the dead-name constant here.
            throw PortError(.deadName, "Mach.Port: \(_name) is a dead name", returning: message.takeContent())
        }
        try send.send(message, timeout: timeout)
    }
}

extension Mach.Port where RightType == Mach.SendOnceRight {
    /// Puts a Harbor send-once right into the name space, under a new name.
    public init(_ right: consuming HarborPorts.SendOnceRight) {
        self.init(name: MachNameSpace.insertSendOnce(right))
    }

    /// Ends this port's ownership and hands the right back as a Harbor
    /// send-once right (for `Message.attach` or `setReplyRight`).
    /// - Throws: `Mach.PortRightError.deadName` if the name holds no live
    ///   send-once right (its port is gone).
    public consuming func takeHarborRight() throws(Mach.PortRightError) -> HarborPorts.SendOnceRight {
        let name = relinquish()
        guard let right = MachNameSpace.takeSendOnce(name) else {
            _ = mach_port_deallocate(mach_task_self_, name)
            throw .deadName
        }
        return right
    }

    /// Sends `message` and uses the right up (Mach: `mach_msg` with
    /// `MACH_MSG_TYPE_MOVE_SEND_ONCE`).
    /// - Throws: `PortError` (`.deadName` if the port is gone), holding the message.
    public consuming func send(_ message: consuming Message) throws(PortError) {
        let name = relinquish()
        guard let right = MachNameSpace.takeSendOnce(name) else {
            _ = mach_port_deallocate(mach_task_self_, name)
            throw PortError(.deadName, "Mach.Port: send-once name \(name) holds no right",
                            returning: message.takeContent())
        }
        try right.send(message)
    }
}
