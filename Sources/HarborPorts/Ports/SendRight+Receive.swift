// Harbor — Mach's combined send-and-receive (the RPC idiom) in one call.
import HarborSystem

extension SendRight {
    /// Sends `request` with a send-once reply right to a new port of its own,
    /// then waits for the reply on that port: Mach's RPC idiom,
    /// `mach_msg(MACH_SEND_MSG | MACH_RCV_MSG)` with a
    /// `MACH_MSG_TYPE_MAKE_SEND_ONCE` reply port, in one call.
    ///
    /// ```swift
    /// let reply = try server.sendAndReceive(Message(id: 7, text: "ping"), timeout: .seconds(1))
    /// ```
    ///
    /// As with `mach_msg`, a send that fails receives nothing. A reply
    /// port of the call's own means a late reply can never be mistaken for
    /// the answer to a later request: once the call returns, the port is
    /// gone and a late reply fails in its sender with
    /// ``PortError/Code/deadName``. If the server drops the reply right
    /// without answering (it ignored the request, or its process died), the
    /// reply is a ``PortNotification/sendOnce(port:)`` notification, as on
    /// Darwin (MIG's `MIG_SERVER_DIED`): check `reply.notification`.
    ///
    /// - Parameters:
    ///   - request: the request, consumed; it must carry no reply right of
    ///     its own (use ``sendAndReceive(_:replyPort:timeout:)`` to choose
    ///     the reply right).
    ///   - timeout: one deadline for the whole call, send and receive
    ///     together: `nil` waits as long as it takes; `.zero` tries the send
    ///     once and takes a reply only if it is already there. Darwin applies
    ///     its one value to each phase, so a call there may take twice as
    ///     long; here the call returns within `timeout`.
    /// - Returns: the reply.
    /// - Throws: what ``send(_:timeout:)`` throws, with the request given
    ///   back as it was passed (``PortError/takeUndeliveredMessage()``), and
    ///   nothing received; ``PortError/Code/invalidRight`` (request given
    ///   back) if the request already carries a reply right;
    ///   ``PortError/Code/timedOut`` without a message if the request was
    ///   sent but no reply came in time. The message in the error tells the
    ///   phases apart, as `MACH_SEND_TIMED_OUT` and `MACH_RCV_TIMED_OUT` do.
    ///
    /// **Cost:** a send and a receive, plus a port per call (an allocation,
    /// and an eventfd once the call waits for the reply); keep a port and
    /// pass it as `replyPort` to pay that once, as MIG does with its
    /// per-thread reply port.
    /// **Mach equivalent:** `mach_msg(MACH_SEND_MSG | MACH_RCV_MSG |
    /// MACH_SEND_TIMEOUT | MACH_RCV_TIMEOUT)` with
    /// `msgh_local_port = reply_port`, `MACH_MSG_TYPE_MAKE_SEND_ONCE`.
    public func sendAndReceive(_ request: consuming Message, timeout: Duration? = nil) throws(PortError) -> Message {
        var request = request
        if request.hasReplyRight {
            throw PortError(.invalidRight,
                            "request \(request.id) already carries a reply right; pass its port as replyPort",
                            returning: request.takeContent())
        }
        let replyPort = ReceiveRight()
        request.setReplyRight(replyPort.makeSendOnceRight())
        let deadline = WaitDeadline(timeout: timeout)
        do {
            try send(request, deadline: deadline)
        } catch {
            // Give the request back as the caller passed it: without the
            // reply right to a port that dies with this call.
            guard var unsent = error.takeUndeliveredMessage() else { throw error }
            _ = unsent.takeReplyRight()
            throw PortError(error.code, error.detail, underlying: error.underlying, returning: unsent.takeContent())
        }
        return try replyPort.receive(deadline: deadline)
    }

    /// Sends `request` as it is, then receives the next message on
    /// `replyPort`: `mach_msg(MACH_SEND_MSG | MACH_RCV_MSG)` with the reply
    /// port you chose, typically reused across calls.
    ///
    /// ```swift
    /// var request = Message(id: 7, text: "ping")
    /// request.setReplyRight(replyPort.makeSendOnceRight())  // msgh_local_port, MAKE_SEND_ONCE
    /// let reply = try server.sendAndReceive(request, replyPort: replyPort, timeout: .seconds(1))
    /// ```
    ///
    /// The request's reply right is yours to set, as `msgh_local_port` is on
    /// Darwin. A reply that comes after the call timed out waits on
    /// `replyPort` and is what the next receive there takes, as on Darwin:
    /// check `reply.id`, or use ``sendAndReceive(_:timeout:)``, whose reply
    /// port dies with the call.
    ///
    /// - Parameters:
    ///   - request: the request, consumed; given back in the error if the
    ///     send fails.
    ///   - replyPort: the port to receive the reply on.
    ///   - timeout: one deadline for the send and the receive together, as
    ///     in ``sendAndReceive(_:timeout:)``.
    /// - Returns: the next message on `replyPort`.
    /// - Throws: what ``send(_:timeout:)`` throws (request given back,
    ///   nothing received), or ``PortError/Code/timedOut`` without a
    ///   message if nothing arrived on `replyPort` in time.
    /// **Mach equivalent:** `mach_msg(MACH_SEND_MSG | MACH_RCV_MSG, …,
    /// rcv_name = reply_port, timeout)`.
    public func sendAndReceive(
        _ request: consuming Message, replyPort: borrowing ReceiveRight, timeout: Duration? = nil
    ) throws(PortError) -> Message {
        let deadline = WaitDeadline(timeout: timeout)
        try send(request, deadline: deadline)
        return try replyPort.receive(deadline: deadline)
    }
}

extension ReceiveRight {
    /// ``receive(timeout:)`` against a deadline already running.
    package func receive(deadline: WaitDeadline) throws(PortError) -> Message {
        Message(content: try core.dequeue(deadline: deadline))
    }
}
