// HarborXPC — a client's session: its connection to the service, made,
// checked, and lost (a dead name, a failed send).
import HarborBootstrap
import HarborPorts
import HarborSystem

extension XPCSession {
    /// The session's right, opening the session (again) if it has none.
    func currentRight() throws(XPCRichError) -> (SendRight, UInt64) {
        let current = state.withLock { state -> Result<(SendRight, UInt64)?, XPCRichError> in
            if let cancelled = state.cancelled { return .failure(cancelled) }
            return .success(state.right.map { ($0, state.generation) })
        }
        if let current = try current.get() { return current }
        let (right, servicePID) = try connect()
        right.requestDeadNameNotification(to: monitor.port.makeSendOnceRight())
        let installed = state.withLock { state -> Result<(SendRight, UInt64), XPCRichError> in
            if let cancelled = state.cancelled { return .failure(cancelled) }
            if let existing = state.right { return .success((existing, state.generation)) }  // another thread won
            state.generation &+= 1
            state.right = right
            state.servicePID = servicePID
            return .success((right, state.generation))
        }
        let result = try installed.get()
        if result.0 != right { try? right.send(Message(id: XPCWire.cancel), timeout: .zero) }
        return result
    }

    /// Looks the name up and asks its listener for a session, handing it a
    /// send right to the session's reply port; the session's right and the
    /// process that accepted it.
    func connect() throws(XPCRichError) -> (SendRight, Int32) {
        let service: SendRight
        do {
            service = try bootstrap.lookUp(self.service)
        } catch {
            throw XPCRichError(.serviceNotFound, "look-up of \(self.service): \(error)")
        }
        var reply: Message
        var request = Message(id: XPCWire.connect)
        request.attach(replyPort.makeSendRight())
        let answers = answerPort()
        request.setReplyRight(answers.makeSendOnceRight())
        do {
            reply = try service.sendAndReceive(request, replyPort: answers, timeout: connectTimeout)
        } catch where error.code == .timedOut {
            // The request's reply right dies with its port: a listener that
            // answers later finds no client and lets the session go.
            throw XPCRichError(.connectTimedOut, "\(self.service) did not answer the session request within "
                               + "\(connectTimeout.map { "\($0)" } ?? "its timeout")")
        } catch {
            throw XPCRichError(.connectionInterrupted, "\(self.service) is gone: \(error.code)")
        }
        try check(reply)
        switch reply.id {
        case XPCWire.accepted:
            guard reply.carriedRights.count == 1, let right = try? reply.takeSendRight(at: 0) else {
                throw XPCRichError(.protocolViolation, "the acceptance carries no session right")
            }
            return (right, reply.trailer.sender.pid)
        case XPCWire.rejected:
            throw XPCRichError(.sessionRejected, XPCWire.reason(reply.text))
        default:
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to a session request")
        }
    }

    /// A port for one answer: it reads each sender's cgroup as the answer
    /// arrives when the requirement names a cgroup or unit (X22).
    func answerPort() -> ReceiveRight {
        let port = ReceiveRight()
        if requirement?.needsCgroup == true { port.readSenderCgroups() }
        return port
    }

    /// Refuses a notification, a failure, or an answer whose sender fails
    /// the requirement: its cgroup as read when the answer arrived, through
    /// the pidfd the kernel took when it was sent, never by its pid later.
    func check(_ reply: borrowing Message) throws(XPCRichError) {
        if reply.notification != nil {
            throw XPCRichError(.connectionInterrupted, "\(service) died (or dropped the request) before answering")
        }
        if reply.id == XPCWire.failure {
            throw Self.failure(reply.text)
        }
        do throws(XPCRichError) {
            try requirement?.check(reply.trailer)
        } catch {
            let refusal = XPCRichError(error.code, "the service: \(error.reason)")
            end(refusal, notify: true)
            throw refusal
        }
    }


    /// The service died: forget its right (the next call looks the name up
    /// again) and fail every pending call of that connection.
    func interrupted(generation: UInt64) {
        let interruption = XPCRichError(.connectionInterrupted, "\(service) died with the call pending")
        let (pending, wakes, receiving) = state.withLock { state -> ([SendRight], SessionWakes, Bool) in
            var wakes = SessionWakes()
            guard state.generation == generation, state.right != nil else { return ([], wakes, false) }
            state.right = nil
            wakes.fail(&state, with: interruption) { $0.generation == generation }
            return (Array(state.pending.values), wakes, state.receiving)
        }
        for wake in pending { try? wake.send(Message(id: XPCWire.wake), timeout: .zero) }
        wakeCallers(wakes, receiving: receiving)
    }

    /// A dead-name notification about `name`, from the monitor's thread.
    func interrupted(ifRightIs name: PortName) {
        let generation = state.withLock { state -> UInt64? in
            state.right?.name == name ? state.generation : nil
        }
        if let generation { interrupted(generation: generation) }
    }
}
