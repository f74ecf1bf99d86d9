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

    /// Sends one invocation with a send-once right to a reply port of its
    /// own, and waits for what arrives there: the answer, or the
    /// notification that the right died unanswered.
    private func call(_ id: HarborActorID, target: RemoteCallTarget,
                      invocation: HarborInvocationEncoder) async throws -> Message {
        guard let right = id.right else {
            throw HarborActorSystemError(.actorNotFound, "\(id) holds no right to reach it")
        }
        if right.isDead { throw HarborActorSystemError(.deadActor, "\(id) is a dead name") }
        var request = try invocation.message(target: target, system: self)
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
            do throws(PortError) {
                try right.send(message, timeout: .zero)
            } catch {
                if error.code == .queueFull, let undelivered = error.takeUndeliveredMessage() {
                    let retry = MessageBox(undelivered)
                    Task { await self.send(retry, to: right, replyPort: replyPort.name) }
                } else {
                    failToSend(replyPort.name, error)
                }
            }
        }
        guard let answer = box.take() else {
            throw HarborActorSystemError(.invalidReply, "the answer was already taken")
        }
        return answer
    }

    /// Sends a call the actor's queue had no room for, retrying every
    /// millisecond without holding a thread; a send that fails ends the call.
    private func send(_ outgoing: MessageBox, to right: SendRight, replyPort: PortName) async {
        guard var message = outgoing.take() else { return }
        while true {
            try? await Task.sleep(for: .milliseconds(1))
            if state.withLock({ $0.pending[replyPort] == nil }) { return }    // shut down meanwhile
            do {
                try right.send(message, timeout: .zero)
                return
            } catch {
                guard error.code == .queueFull, let undelivered = error.takeUndeliveredMessage() else {
                    failToSend(replyPort, error)
                    return
                }
                message = undelivered
            }
        }
    }

    /// Ends the call whose send failed.
    private func failToSend(_ replyPort: PortName, _ failure: PortError) {
        guard let failed = state.withLock({ $0.pending.removeValue(forKey: replyPort) }) else { return }
        ports.remove(failed.port.right)
        let code: HarborActorSystemError.Code = failure.code == .messageTooLarge ? .encodingFailed : .deadActor
        failed.continuation.resume(throwing: HarborActorSystemError(code, "sending the call: \(failure)"))
    }
}
