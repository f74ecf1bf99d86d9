// HarborXPC — a client's session: calls by number over its one reply port,
// and calls through a port of their own (subscriptions).
import Dispatch
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
        return try answer(Message(content: try awaitReply(number)))
    }

    /// One call by number that no thread waits for: `completion` runs once
    /// with its checked reply or error, on the thread that received the
    /// reply (a `sendSync` caller receiving for the session, or the
    /// session's reply thread) or that failed the call (a cancel, the
    /// service's death, a failed send).
    func call(_ request: consuming Message,
              completion: @escaping @Sendable (Result<XPCReceivedMessage, XPCRichError>) -> Void) {
        let finish: CallCompletion = { [self] outcome in
            completion(Result { () throws(XPCRichError) -> XPCReceivedMessage in
                try answer(Message(content: try outcome.get()))
            })
        }
        let registered: (SendRight, UInt64, UInt64)
        do {
            registered = try register(completion: finish)
        } catch {
            completion(.failure(error))
            return
        }
        let (right, generation, number) = registered
        XPCWire.append(number, to: &request)
        // Sent at once unless the service's queue is full or earlier calls
        // wait for room (so they stay first): the caller never waits.
        if !state.withLock({ $0.sendsBehind > 0 }) {
            do throws(PortError) {
                try right.send(request, timeout: .zero)
                ensureReceiving()
                return
            } catch where error.code == .queueFull {
                guard let undelivered = error.takeUndeliveredMessage() else {
                    failSend(number, generation: generation, error)
                    return
                }
                request = undelivered
            } catch {
                failSend(number, generation: generation, error)
                return
            }
        }
        sendBehind(request, on: right, number: number, generation: generation)
        ensureReceiving()
    }

    /// Sends a call no thread waits for once the service's queue has room,
    /// from the session's send queue, in the order such calls were made:
    /// tries every 100 ms while the call still waits (a cancelled or failed
    /// call's request is dropped; no thread stays with a service that
    /// never reads).
    private func sendBehind(_ request: consuming Message, on right: SendRight, number: UInt64, generation: UInt64) {
        state.withLock { $0.sendsBehind += 1 }
        let box = MessageBox(.success(request))
        sendQueue.async { [self] in
            defer { state.withLock { $0.sendsBehind -= 1 } }
            guard var message = try? box.take() else { return }
            while true {
                do throws(PortError) {
                    try right.send(message, timeout: .milliseconds(100))
                    return
                } catch where error.code == .timedOut {
                    guard state.withLock({ $0.calls[number] != nil }),
                          let undelivered = error.takeUndeliveredMessage() else { return }
                    message = undelivered
                } catch {
                    failSend(number, generation: generation, error)
                    return
                }
            }
        }
    }

    /// A call no thread waits for could not be sent: the connection is
    /// taken as lost, and whoever takes the call out of the table (here,
    /// unless a cancel or the service's death did first) runs its completion.
    private func failSend(_ number: UInt64, generation: UInt64, _ error: PortError) {
        let completion = state.withLock { state -> CallCompletion? in
            guard let call = state.calls.removeValue(forKey: number) else { return nil }
            state.waitingCompletions -= 1
            return call.completion
        }
        interrupted(generation: generation)
        completion?(.failure(XPCRichError(.connectionInterrupted, "\(service) is gone: \(error.code)")))
    }

    /// A call's reply, checked: the requirement, a failure answered, an
    /// id that answers no call.
    private func answer(_ reply: consuming Message) throws(XPCRichError) -> XPCReceivedMessage {
        try check(reply)
        guard reply.id == XPCWire.reply else {
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to a request")
        }
        return XPCReceivedMessage(reply)
    }

    /// The session's right, its connection's generation, and a new call
    /// number registered as pending on that connection (with `completion`:
    /// a call no caller waits for).
    func register(completion: CallCompletion? = nil) throws(XPCRichError) -> (SendRight, UInt64, UInt64) {
        while true {
            let registered = state.withLock { state -> Result<(SendRight, UInt64, UInt64)?, XPCRichError> in
                if let cancelled = state.cancelled { return .failure(cancelled) }
                guard let right = state.right else { return .success(nil) }
                state.nextCall &+= 1
                state.calls[state.nextCall] = PendingCall(generation: state.generation, completion: completion)
                if completion != nil { state.waitingCompletions += 1 }
                return .success((right, state.generation, state.nextCall))
            }
            if let registered = try registered.get() { return registered }
            _ = try currentRight()
        }
    }

    /// Has someone receive while calls with completions wait and no
    /// caller receives: the session's reply thread, started on first
    /// need, else woken.
    private func ensureReceiving() {
        let start = state.withLock { state -> Bool? in
            guard !state.receiving, state.waitingCompletions > 0 else { return nil }
            if state.replyThreadStarted { return false }
            state.replyThreadStarted = true
            return true
        }
        switch start {
        case nil: return
        case false?: replyThreadParker.unpark()
        case true?: startReplyThread()
        }
    }

    /// What the reply thread does next.
    enum ReplyThreadStep: Sendable {
        case receive
        case park
        case exit
    }

    /// The session's reply thread: receives for the calls with completions
    /// while no caller does; sleeps while none wait; ends with the session
    /// (it holds the session only while it receives).
    private func startReplyThread() {
        let parker = replyThreadParker
        do {
            try SystemThread.spawn { [weak self] in
                while let step = self?.replyThreadStep() {
                    switch step {
                    case .receive: self?.receiveReply(for: nil)
                    case .park: _ = parker.park(until: .never)
                    case .exit: return
                    }
                }
            }.detach()
        } catch {
            let failure = XPCRichError(.connectionInvalid, "no thread for the session's replies: \(error)")
            let wakes = state.withLock { state -> SessionWakes in
                state.replyThreadStarted = false
                var wakes = SessionWakes()
                wakes.fail(&state, with: failure) { $0.completion != nil }
                return wakes
            }
            wakes.perform()
        }
    }

    /// The reply thread's next step, decided under the lock.
    private func replyThreadStep() -> ReplyThreadStep {
        state.withLock { state -> ReplyThreadStep in
            if state.waitingCompletions == 0 { return state.cancelled == nil ? .park : .exit }
            if state.receiving { return .park }
            state.receiving = true
            return .receive
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
    /// wake-up, another sender) is dropped. `me`: the caller's own call, or
    /// nil for the reply thread. Gives the receiving up: to a parked caller
    /// once `me` is done (or for the reply thread), else to the reply thread
    /// if calls with completions still wait.
    func receiveReply(for me: UInt64?) {
        var failed: XPCRichError?
        var delivery: (number: UInt64, sender: Int32, content: MessageContent)?
        do throws(PortError) {
            delivery = Self.numbered(try replyPort.receive())
        } catch {
            failed = XPCRichError(.connectionInterrupted, "the reply port failed: \(error.code)")
        }
        let (wakes, dropped, needsReceiver) = state.withLock { state -> (SessionWakes, MessageContent?, Bool) in
            state.receiving = false
            var wakes = SessionWakes()
            var dropped: MessageContent?
            if let failed {
                if let me {
                    state.calls[me]?.outcome = .failure(failed)
                } else {
                    wakes.fail(&state, with: failed) { $0.completion != nil }
                }
            }
            if let (number, sender, content) = delivery {
                if sender == state.servicePID, var call = state.calls[number], call.outcome == nil {
                    if let completion = call.completion {
                        state.calls[number] = nil
                        state.waitingCompletions -= 1
                        wakes.completions.append((completion, .success(content)))
                    } else {
                        call.outcome = .success(content)
                        state.calls[number] = call
                        if number != me, let parker = call.parker { wakes.parkers.append(parker) }
                    }
                } else {
                    dropped = content
                }
            }
            guard me.map({ state.calls[$0]?.outcome != nil }) ?? true else { return (wakes, dropped, false) }
            if let next = state.calls.values.first(where: { $0.outcome == nil && $0.parker != nil })?.parker {
                wakes.parkers.append(next)
            }
            return (wakes, dropped, me != nil && state.waitingCompletions > 0)
        }
        if let dropped { _ = Message(content: dropped) }  // released with its rights
        wakes.perform()
        if needsReceiver { ensureReceiving() }
    }

    /// A numbered reply or failure's number, sender and content (the number
    /// taken off its body); nil for anything else.
    private static func numbered(_ message: consuming Message) -> (number: UInt64, sender: Int32, content: MessageContent)? {
        guard message.notification == nil, message.id == XPCWire.reply || message.id == XPCWire.failure,
              let number = XPCWire.takeNumber(from: &message) else { return nil }
        let sender = message.trailer.sender.pid
        return (number, sender, message.takeContent())
    }

    /// Wakes callers whose calls failed and the one receiving, if any;
    /// then runs the completions of calls no caller waits for.
    func wakeCallers(_ wakes: SessionWakes, receiving: Bool) {
        if receiving { try? replyWake.send(Message(id: XPCWire.wake), timeout: .zero) }
        wakes.perform()
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
