// HarborDistributed — the system's thread: calls in, answers in, notifications.
import Distributed
import HarborCoding
import HarborPorts
import HarborSystem

extension HarborActorSystem {
    /// Receives from every port of the system until the stop message: a
    /// call to a local actor starts a task that runs it; an answer (or the
    /// send-once notification of a reply right that died unanswered)
    /// resumes its caller; a no-senders notification releases an actor.
    func run() {
        while true {
            let message: Message
            do { message = try ports.receive() } catch { continue }
            guard let port = message.trailer.port else { continue }
            if port == notifications.name {
                if !notified(message) { return }
            } else if let call = state.withLock({ $0.pending.removeValue(forKey: port) }) {
                answered(call, message)
            } else {
                received(message, at: port)
            }
        }
    }

    /// A message at the notification port; `false` for the stop message.
    private func notified(_ message: consuming Message) -> Bool {
        switch message.notification {
        case .noSenders(let port)?:
            released(port)
        case nil:
            if message.id == ActorWire.stop, message.trailer.sender.pid == ProcessIdentity.current.pid {
                return false
            }
        default:
            break       // a no-senders request replaced or dropped with its actor
        }
        return true
    }

    /// The last send right to a local actor's port went: re-arm the request
    /// and, unless a right was made meanwhile, let go of the actor (it
    /// lives on only if something in this process holds it).
    private func released(_ port: PortName) {
        let dropped = state.withLock { state -> (any DistributedActor)? in
            guard var entry = state.hosted[port] else { return nil }
            entry.port.right.requestNoSendersNotification(to: notifications.makeSendOnceRight())
            guard entry.port.right.status.sendRights == 0, entry.checkedInNames == 0 else { return nil }
            defer { entry.strong = nil; state.hosted[port] = entry }
            return entry.strong
        }
        _ = dropped     // released here, outside the lock (its deinit resigns its ID)
    }

    /// The answer to a pending call, or the notification that its reply
    /// right died unanswered.
    private func answered(_ call: PendingCall, _ message: consuming Message) {
        ports.remove(call.port.right)
        if message.notification != nil {
            call.continuation.resume(throwing: HarborActorSystemError(
                .deadActor, "the actor's process died, or dropped the call, with the call pending"))
        } else {
            call.answer.put(message)
            call.continuation.resume()
        }
    }

    /// A message at a local actor's port, or at a name's port checked in
    /// for it: run it as a call in a task of its own, on its sender uid's
    /// share of running calls, or answer why not. A call that waited in
    /// harbord before the check-in is relayed by harbord, which this
    /// process trusts (`RelayTrust`): its `trailer.sender` is the real
    /// sender as harbord vouches, so that sender's uid pays, not harbord's.
    private func received(_ message: consuming Message, at port: PortName) {
        let target = state.withLock { state -> (actor: (any DistributedActor)?, prefix: String?)? in
            guard let entry = state.hosted[state.aliases[port] ?? port] else { return nil }
            return (entry.actor, entry.targetPrefix)
        }
        guard let target else { return }    // neither a call's port nor an actor's: it went meanwhile
        var message = message
        guard message.notification == nil, let reply = message.takeReplyRight() else { return }
        // Whoever asks pays: the call runs as a task until it answers, on
        // its sender uid's share; the handler gives it back as it answers.
        let uid = UInt32(message.trailer.sender.uid)
        guard runningCalls.take(for: uid) else {
            HarborResultHandler(reply: reply, system: self).fail(HarborActorSystemError(
                .busy, "uid \(uid) keeps \(Self.runningCallsPerUid) calls running in this system, or all callers "
                    + "\(Self.runningCallLimit)"))
            return
        }
        let runningCalls = self.runningCalls
        let handler = HarborResultHandler(reply: reply, system: self) { runningCalls.give(for: uid) }
        guard message.id == ActorWire.invocation else {
            handler.fail(HarborActorSystemError(.invalidInvocation, "message id \(message.id) is not a call"))
            return
        }
        guard let actor = target.actor, let prefix = target.prefix else {
            handler.fail(HarborActorSystemError(.deadActor, "the actor was released"))
            return
        }
        let box = MessageBox(message)
        Task.detached { [self] in
            await execute(box, on: actor, targetPrefix: prefix, handler: handler)
        }
    }

    /// Decodes the call and runs it on `actor`; every failure is answered.
    private func execute(_ box: MessageBox, on actor: any DistributedActor, targetPrefix: String,
                         handler: HarborResultHandler) async {
        guard let message = box.take() else { return }
        do {
            var reader = try MessageValueReader(message, userInfo: codingUserInfo)
            let header = try reader.next(InvocationHeader.self)
            // The runtime finds a function by its name alone and would run
            // another type's function on this actor: only this type's run.
            guard header.target.hasPrefix(targetPrefix) else {
                throw HarborActorSystemError(.unknownTarget, "\(header.target) is not a function of \(type(of: actor))")
            }
            var decoder = HarborInvocationDecoder(reader: reader, header: header)
            try await executeDistributedTarget(on: actor, target: RemoteCallTarget(header.target),
                                               invocationDecoder: &decoder, handler: handler)
        } catch let error as HarborActorSystemError {
            handler.fail(error)
        } catch let error as ExecuteDistributedTargetError {
            let code: HarborActorSystemError.Code = error.errorCode == .targetAccessorNotFound ? .unknownTarget : .invalidInvocation
            handler.fail(HarborActorSystemError(code, error.message))
        } catch {
            handler.fail(HarborActorSystemError(.invalidInvocation, "\(error)"))
        }
        if !handler.hasAnswered {
            handler.fail(HarborActorSystemError(.invalidInvocation, "the call ended without an answer"))
        }
    }
}
