// HarborDistributed — the caller's side: one message, one answer.
import Distributed
import HarborCoding
import HarborPorts
import HarborSystem

extension HarborActorSystem {
    /// Sends the call to the remote `actor` and returns its value, or
    /// rethrows its error (as itself when this process can rebuild it).
    /// - Throws: ``HarborActorSystemError`` (see its codes), or the error
    ///   the remote function threw.
    public func remoteCall<Act: DistributedActor, Err: Error, Res: Codable>(
        on actor: Act,
        target: RemoteCallTarget,
        invocation: inout HarborInvocationEncoder,
        throwing: Err.Type,
        returning: Res.Type
    ) async throws -> Res where Act.ID == HarborActorID {
        let answer = try await call(actor.id, target: target, invocation: invocation)
        guard answer.id == ActorWire.returned else {
            throw failure(of: answer, target: target, throwing: Err.self)
        }
        var decoder = MessageDecoder()
        decoder.userInfo = codingUserInfo
        do {
            return try decoder.decode(Res.self, from: answer)
        } catch {
            throw HarborActorSystemError(.invalidReply, "the result of \(target) as \(Res.self): \(error)")
        }
    }

    /// Sends the call to the remote `actor` and waits for its return, or
    /// rethrows its error.
    public func remoteCallVoid<Act: DistributedActor, Err: Error>(
        on actor: Act,
        target: RemoteCallTarget,
        invocation: inout HarborInvocationEncoder,
        throwing: Err.Type
    ) async throws where Act.ID == HarborActorID {
        let answer = try await call(actor.id, target: target, invocation: invocation)
        if answer.id == ActorWire.returnedVoid { return }
        throw failure(of: answer, target: target, throwing: Err.self)
    }

    /// What an answer other than a value says went wrong.
    private func failure<Err: Error>(of answer: consuming Message, target: RemoteCallTarget,
                                     throwing: Err.Type) -> any Error {
        switch answer.id {
        case ActorWire.failed:
            return ActorWire.error(fromFailure: answer.text)
        case ActorWire.threw:
            return thrownError(answer, declared: Err.self)
        default:
            return HarborActorSystemError(.invalidReply, "unexpected answer \(answer.id) to \(target)")
        }
    }

    /// The remote function's error: itself when its type is the declared
    /// one or registered, else a ``HarborActorSystemError/Code/remoteError``.
    private func thrownError<Err: Error>(_ answer: consuming Message, declared: Err.Type) -> any Error {
        do {
            var reader = try MessageValueReader(answer, userInfo: codingUserInfo)
            let header = try reader.next(ThrownHeader.self)
            if header.hasValue {
                if let decodable = Err.self as? any (Error & Decodable).Type, _mangledTypeName(Err.self) == header.type {
                    return try Self.decodeError(decodable, &reader)
                }
                if let rebuilder = state.withLock({ $0.errorTypes[header.type] }) {
                    return try rebuilder.decode(&reader)
                }
            }
            return HarborActorSystemError(.remoteError, header.description, remoteType: header.typeName)
        } catch {
            return HarborActorSystemError(.invalidReply, "a thrown error's answer: \(error)")
        }
    }

    private static func decodeError<E: Error & Decodable>(_ type: E.Type, _ reader: inout MessageValueReader)
        throws(MessageCodingError) -> any Error
    {
        try reader.next(E.self)
    }

    /// Sends one invocation and waits for its answer: by number over the
    /// link to the actor's process once a first call taught the system
    /// which process that is (D08), else with a send-once right to a reply
    /// port of its own (D01), whose answer teaches it. When the caller's
    /// task is cancelled meanwhile, the actor's system is told (D11,
    /// ``CallCancellation``), and the call still waits for its one answer.
    private func call(_ id: HarborActorID, target: RemoteCallTarget,
                      invocation: HarborInvocationEncoder) async throws -> Message {
        guard let right = id.right else {
            throw HarborActorSystemError(.actorNotFound, "\(id) holds no right to reach it")
        }
        let number = CallNumber.next()
        // By number when the port's process is known and the links have
        // room: below the reply port's queue limit in all, so every answer
        // finds room.
        let link = state.withLock { state -> (link: ReplyLink, introduced: Bool)? in
            guard !state.stopped, state.numbered.count < Self.numberedCallsPerLink,
                  let route = state.routes[right.name], let link = state.links[route.pid] else { return nil }
            return (link, route.introduced)
        }
        // A port known by its route is watched (its dead-name notification
        // fails its calls by number, and a send to it fails): no look here,
        // which costs a system call.
        if link == nil, right.isDead { throw HarborActorSystemError(.deadActor, "\(id) is a dead name") }
        let outgoing = MessageBox(link == nil ? try invocation.message(target: target, number: number, system: self)
                                              : try invocation.numberedMessage(target: target, system: self))
        let cancellation = CallCancellation(number: number, right: right)
        let answered = try await withTaskCancellationHandler {
            guard let request = outgoing.take() else {
                throw HarborActorSystemError(.encodingFailed, "the call was already sent")
            }
            if let link {
                return MessageBox(try await callByNumber(request, number: number, to: right, link: link.link,
                                                         introducing: !link.introduced, cancellation: cancellation))
            }
            let answer = try await callOnce(request, to: right, cancellation: cancellation)
            learn(from: answer, about: right)
            return MessageBox(answer)
        } onCancel: {
            cancellation.cancel()
        }
        guard let answer = answered.take() else {
            throw HarborActorSystemError(.invalidReply, "the answer was already taken")
        }
        return answer
    }

    /// Remembers which process answered a call to `right`'s port, so the
    /// next calls go by number over the link to it (D08), and asks for the
    /// port's dead-name notification, which fails those calls when the
    /// actor or its process goes.
    private func learn(from answer: borrowing Message, about right: SendRight) {
        let pid = answer.trailer.sender.pid
        guard pid > 0, answer.notification == nil else { return }
        let (learned, added) = state.withLock { state -> (Bool, ReplyLink?) in
            guard !state.stopped, state.routes[right.name] == nil, state.routes.count < Self.routeLimit,
                  !right.isDead else { return (false, nil) }
            state.routes[right.name] = RemoteActorRoute(pid: pid)
            guard state.links[pid] == nil else { return (true, nil) }
            let link = ReplyLink(pid: pid)
            state.links[pid] = link
            state.linkPorts[link.port.name] = pid
            return (true, link)
        }
        if let added {
            try? added.port.right.setQueueLimit(Self.numberedCallsPerLink)
            do {
                try ports.insert(added.port.right)
            } catch {
                // A link nobody receives from would leave its calls waiting: forget it.
                state.withLock { state in
                    state.links[pid] = nil
                    state.linkPorts[added.port.name] = nil
                    state.routes[right.name] = nil
                }
                return
            }
        }
        if learned { right.requestDeadNameNotification(to: notifications.makeSendOnceRight()) }
    }

    /// Sends one invocation by number over `link` (D08; `request` has a
    /// ``CompactInvocation`` body), handing the link's reply port over with
    /// it when `introducing`, and waits for the answer the system's thread
    /// matches by number, or for the dead-name notification of the actor's
    /// port.
    private func callByNumber(_ request: consuming Message, number: UInt64, to right: SendRight, link: ReplyLink,
                              introducing: Bool, cancellation: CallCancellation) async throws -> Message {
        var request = request
        let box = MessageBox()
        request.id = introducing ? ActorWire.introducingCall : ActorWire.call
        if introducing { request.attach(link.port.right.makeSendRight()) }
        ActorWire.append(link.id, to: &request)
        ActorWire.append(number, to: &request)
        let outgoing = MessageBox(request)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let registered = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.numbered[number] = NumberedCall(actor: right.name, pid: link.pid, introducing: introducing,
                                                      answer: box, continuation: continuation)
                return true
            }
            guard registered else {
                continuation.resume(throwing: HarborActorSystemError(.systemShutDown, "the system was shut down"))
                return
            }
            guard let message = outgoing.take() else { return }
            send(message, to: right, key: .numbered(number), cancellation: cancellation)
        }
        guard let answer = box.take() else {
            throw HarborActorSystemError(.invalidReply, "the answer was already taken")
        }
        return answer
    }

    /// Sends one invocation with a send-once right to a reply port of its
    /// own, and waits for what arrives there: the answer, or the
    /// notification that the right died unanswered.
    private func callOnce(_ request: consuming Message, to right: SendRight,
                          cancellation: CallCancellation) async throws -> Message {
        var request = request
        let replyPort = PortBox(ReceiveRight())
        do {
            try ports.insert(replyPort.right)
        } catch {
            throw HarborActorSystemError(.systemShutDown, "no reply port for the call: \(error)")
        }
        request.setReplyRight(replyPort.right.makeSendOnceRight())
        let outgoing = MessageBox(request)
        let box = MessageBox()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let registered = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.pending[replyPort.name] = PendingCall(port: replyPort, answer: box, continuation: continuation)
                return true
            }
            guard registered else {
                ports.remove(replyPort.right)
                continuation.resume(throwing: HarborActorSystemError(.systemShutDown, "the system was shut down"))
                return
            }
            guard let message = outgoing.take() else { return }
            send(message, to: right, key: .once(replyPort.name), cancellation: cancellation)
        }
        guard let answer = box.take() else {
            throw HarborActorSystemError(.invalidReply, "the answer was already taken")
        }
        return answer
    }

    /// Sends a registered call; one the actor's queue has no room for is
    /// retried from a task, one that fails otherwise ends the call. A call
    /// sent is told to its `cancellation`, which may follow it.
    private func send(_ message: consuming Message, to right: SendRight, key: CallKey,
                      cancellation: CallCancellation) {
        do throws(PortError) {
            try right.send(message, timeout: .zero)
            cancellation.sent()
        } catch {
            if error.code == .queueFull, let undelivered = error.takeUndeliveredMessage() {
                let retry = MessageBox(undelivered)
                Task { await self.send(retry, to: right, key: key, cancellation: cancellation) }
            } else {
                failToSend(key, error)
            }
        }
    }

    /// Sends a call the actor's queue had no room for, retrying every
    /// millisecond without holding a thread; a send that fails ends the call.
    private func send(_ outgoing: MessageBox, to right: SendRight, key: CallKey,
                      cancellation: CallCancellation) async {
        guard var message = outgoing.take() else { return }
        while true {
            try? await Task.sleep(for: .milliseconds(1))
            if !isPending(key) { return }    // ended meanwhile (shut down, or its actor died)
            do {
                try right.send(message, timeout: .zero)
                cancellation.sent()
                return
            } catch {
                guard error.code == .queueFull, let undelivered = error.takeUndeliveredMessage() else {
                    failToSend(key, error)
                    return
                }
                message = undelivered
            }
        }
    }

    /// Whether the call is still waiting for its answer.
    private func isPending(_ key: CallKey) -> Bool {
        state.withLock { state in
            switch key {
            case .once(let port): state.pending[port] != nil
            case .numbered(let number): state.numbered[number] != nil
            }
        }
    }

    /// Ends the call whose send failed.
    private func failToSend(_ key: CallKey, _ failure: PortError) {
        let code: HarborActorSystemError.Code = failure.code == .messageTooLarge ? .encodingFailed : .deadActor
        let error = HarborActorSystemError(code, "sending the call: \(failure)")
        switch key {
        case .once(let replyPort):
            guard let failed = state.withLock({ $0.pending.removeValue(forKey: replyPort) }) else { return }
            ports.remove(failed.port.right)
            failed.continuation.resume(throwing: error)
        case .numbered(let number):
            guard let failed = state.withLock({ $0.numbered.removeValue(forKey: number) }) else { return }
            failed.continuation.resume(throwing: error)
        }
    }
}
