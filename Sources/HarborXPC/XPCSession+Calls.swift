// HarborXPC — a client's session: calls by number over its one reply port,
// and calls through a port of their own (subscriptions).
import HarborPorts
import HarborSystem

extension XPCSession {
    /// One call: a number, sent at the end of the request's body; its reply
    /// comes to the session's reply port with the same number.
    func call(_ request: consuming Message) throws(XPCRichError) -> XPCReceivedMessage {
        let (right, generation, number) = try register()
        XPCWire.append(number, to: &request)
        do {
            try right.send(request)
        } catch {
            _ = state.withLock { $0.calls.removeValue(forKey: number) }
            interrupted(generation: generation)
            throw XPCRichError(.connectionInterrupted, "\(service) is gone: \(error.code)")
        }
        let reply = Message(content: try awaitReply(number))
        try check(reply)
        guard reply.id == XPCWire.reply else {
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to a request")
        }
        return XPCReceivedMessage(reply)
    }

    /// The session's right, its connection's generation, and a new call
    /// number registered as pending on that connection.
    func register() throws(XPCRichError) -> (SendRight, UInt64, UInt64) {
        while true {
            let registered = state.withLock { state -> Result<(SendRight, UInt64, UInt64)?, XPCRichError> in
                if let cancelled = state.cancelled { return .failure(cancelled) }
                guard let right = state.right else { return .success(nil) }
                state.nextCall &+= 1
                state.calls[state.nextCall] = PendingCall(generation: state.generation)
                return .success((right, state.generation, state.nextCall))
            }
            if let registered = try registered.get() { return registered }
            _ = try currentRight()
        }
    }

    /// Waits for call `number`'s outcome: receives on the reply port for
    /// every pending call while no other caller does, else sleeps until the
    /// receiving caller hands it its reply or the receiving over.
    func awaitReply(_ number: UInt64) throws(XPCRichError) -> MessageContent {
        while true {
            let step = state.withLock { state -> Step in
                guard let call = state.calls[number] else {
                    return .done(.failure(state.cancelled ?? XPCRichError(.connectionInterrupted, "the call was lost")))
                }
                if let outcome = call.outcome {
                    state.calls[number] = nil
                    return .done(outcome)
                }
                if !state.receiving {
                    state.receiving = true
                    return .receive
                }
                let parker = call.parker ?? Parker()
                state.calls[number]?.parker = parker
                return .park(parker)
            }
            switch step {
            case .done(let outcome): return try outcome.get()
            case .park(let parker): _ = parker.park(until: .never)
            case .receive: receiveReply(for: number)
            }
        }
    }

    /// Receives one message on the reply port and hands it to its call: a
    /// numbered reply or failure from the connection's service to a call
    /// still waiting; anything else (a stale, unknown or duplicate number, a
    /// wake-up, another sender) is dropped. Gives the receiving up, to a
    /// parked caller if `me` is done.
    func receiveReply(for me: UInt64) {
        var failed: XPCRichError?
        var delivery: (number: UInt64, sender: Int32, content: MessageContent)?
        do throws(PortError) {
            delivery = Self.numbered(try replyPort.receive())
        } catch {
            failed = XPCRichError(.connectionInterrupted, "the reply port failed: \(error.code)")
        }
        let (parkers, dropped) = state.withLock { state -> ([Parker], MessageContent?) in
            state.receiving = false
            var parkers: [Parker] = []
            var dropped: MessageContent?
            if let failed { state.calls[me]?.outcome = .failure(failed) }
            if let (number, sender, content) = delivery {
                if sender == state.servicePID, var call = state.calls[number], call.outcome == nil {
                    call.outcome = .success(content)
                    state.calls[number] = call
                    if number != me, let parker = call.parker { parkers.append(parker) }
                } else {
                    dropped = content
                }
            }
            if state.calls[me]?.outcome != nil,
               let next = state.calls.values.first(where: { $0.outcome == nil && $0.parker != nil })?.parker {
                parkers.append(next)
            }
            return (parkers, dropped)
        }
        if let dropped { _ = Message(content: dropped) }  // released with its rights
        for parker in parkers { parker.unpark() }
    }

    /// A numbered reply or failure's number, sender and content (the number
    /// taken off its body); nil for anything else.
    private static func numbered(_ message: consuming Message) -> (number: UInt64, sender: Int32, content: MessageContent)? {
        guard message.notification == nil, message.id == XPCWire.reply || message.id == XPCWire.failure,
              let number = XPCWire.takeNumber(from: &message) else { return nil }
        let sender = message.trailer.sender.pid
        return (number, sender, message.takeContent())
    }

    /// Fails every call `which` picks that has no outcome yet; the parkers
    /// of their callers.
    static func fail(_ calls: inout [UInt64: PendingCall], with error: XPCRichError,
                             which: (PendingCall) -> Bool) -> [Parker] {
        var parkers: [Parker] = []
        for (number, call) in calls where call.outcome == nil && which(call) {
            calls[number]?.outcome = .failure(error)
            if let parker = call.parker { parkers.append(parker) }
        }
        return parkers
    }

    /// Wakes callers whose calls failed, and the one receiving, if any.
    func wakeCallers(_ parkers: [Parker], receiving: Bool) {
        for parker in parkers { parker.unpark() }
        if receiving { try? replyWake.send(Message(id: XPCWire.wake), timeout: .zero) }
    }

    /// A call through a reply port of its own, a send-once right to it in
    /// the request: a subscription, whose request carries rights the
    /// publisher takes.
    func callThroughOwnPort(_ request: consuming Message) throws(XPCRichError) -> XPCReceivedMessage {
        let (right, generation) = try currentRight()
        let replyPort = answerPort()
        let registered = state.withLock { state -> Result<UInt64, XPCRichError> in
            if let cancelled = state.cancelled { return .failure(cancelled) }
            state.nextCall &+= 1
            state.pending[state.nextCall] = replyPort.makeSendRight()
            return .success(state.nextCall)
        }
        let call = try registered.get()
        defer { _ = state.withLock { $0.pending.removeValue(forKey: call) } }
        request.setReplyRight(replyPort.makeSendOnceRight())
        do {
            try right.send(request)
        } catch {
            interrupted(generation: generation)
            throw XPCRichError(.connectionInterrupted, "\(service) is gone: \(error.code)")
        }
        let reply: Message
        do {
            reply = try replyPort.receive()
        } catch {
            throw XPCRichError(.connectionInterrupted, "the reply port failed: \(error.code)")
        }
        if reply.id == XPCWire.wake, reply.notification == nil,
           reply.trailer.sender.pid == ProcessIdentity.current.pid {
            let cancelled = state.withLock { $0.cancelled }
            throw cancelled ?? XPCRichError(.connectionInterrupted, "\(service) died with the call pending")
        }
        if reply.notification != nil { interrupted(generation: generation) }
        try check(reply)
        guard reply.id == XPCWire.reply else {
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to a request")
        }
        return XPCReceivedMessage(reply)
    }
}
