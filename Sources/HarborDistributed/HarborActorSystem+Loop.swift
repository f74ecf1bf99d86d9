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
        executor.runsOnCurrentThread()
        defer { executor.stop() }
        while true {
            executor.runJobs()
            let message: Message
            do { message = try ports.receive() } catch { continue }
            executor.awake()
            guard let port = message.trailer.port else { continue }
            if port == notifications.name {
                if !notified(message) { return }
            } else if let call = state.withLock({ $0.pending.removeValue(forKey: port) }) {
                answered(call, message)
            } else if let pid = state.withLock({ $0.linkPorts[port] }) {
                answeredByNumber(message, from: pid)
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
        case .deadName(let port)?:
            died(port)
        case nil:
            if message.id == ActorWire.stop, message.trailer.sender.pid == ProcessIdentity.current.pid {
                return false
            }
            // ActorWire.wake: the jobs queued run before the next wait.
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

    /// A port this system watches died (D08): a remote actor's, whose
    /// calls by number then fail (`deadActor`) and whose route is
    /// forgotten, with its link when no route uses it any more; or a
    /// caller's reply port, whose link is forgotten and its share given back.
    private func died(_ port: PortName) {
        let (failed, link, caller) = state.withLock { state -> ([NumberedCall], ReplyLink?, CallerLink?) in
            var caller: CallerLink?
            if let key = state.callerPorts.removeValue(forKey: port) {
                caller = state.callers.removeValue(forKey: key)
            }
            guard let route = state.routes.removeValue(forKey: port) else { return ([], nil, caller) }
            var failed: [NumberedCall] = []
            for (number, call) in state.numbered where call.actor == port {
                failed.append(call)
                state.numbered[number] = nil
            }
            guard !state.routes.values.contains(where: { $0.pid == route.pid }),
                  let link = state.links.removeValue(forKey: route.pid) else { return (failed, nil, caller) }
            state.linkPorts[link.port.name] = nil
            for (number, call) in state.numbered where call.pid == route.pid {
                failed.append(call)
                state.numbered[number] = nil
            }
            return (failed, link, caller)
        }
        if let caller { callerLinks.give(for: caller.uid) }
        if let link { ports.remove(link.port.right) }
        for call in failed {
            call.continuation.resume(throwing: HarborActorSystemError(
                .deadActor, "the actor's port died (its process died, or it was released) with the call pending"))
        }
    }

    /// An answer at a link's reply port (D08): taken only if the link's
    /// process sent it and its number is a call still waiting on the link;
    /// anything else is dropped.
    private func answeredByNumber(_ message: consuming Message, from pid: Int32) {
        var message = message
        guard message.notification == nil, ActorWire.isAnswer(message.id), message.trailer.sender.pid == pid,
              let number = ActorWire.takeNumber(from: &message) else { return }
        let id = message.id
        let call = state.withLock { state -> NumberedCall? in
            guard let call = state.numbered[number], call.pid == pid else { return nil }
            state.numbered[number] = nil
            if call.introducing, id != ActorWire.failed { state.routes[call.actor]?.introduced = true }
            return call
        }
        guard let call else { return }
        call.answer.put(message)
        call.continuation.resume()
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
        guard message.notification == nil else { return }
        if message.id == ActorWire.cancel {
            cancelled(message)
            return
        }
        if let requirement = callerRequirement, !requirement.isSatisfied(by: message.trailer.sender) {
            refused(message, requirement)
            return
        }
        let route: CallRoute
        var number: UInt64?
        if message.id == ActorWire.call || message.id == ActorWire.introducingCall {
            guard let numbered = callerRoute(of: &message) else { return }
            number = numbered.number
            route = numbered
        } else {
            guard let reply = message.takeReplyRight() else { return }
            route = .once(reply)
        }
        // Whoever asks pays: the call runs as a task until it answers, on
        // its sender uid's share; the handler gives it back as it answers.
        let uid = UInt32(message.trailer.sender.uid)
        guard runningCalls.take(for: uid) else {
            HarborResultHandler(route: route, system: self).fail(HarborActorSystemError(
                .busy, "uid \(uid) keeps \(Self.runningCallsPerUid) calls running in this system, or all callers "
                    + "\(Self.runningCallLimit)"))
            return
        }
        let runningCalls = self.runningCalls
        let handler = HarborResultHandler(route: route, system: self) { runningCalls.give(for: uid) }
        guard message.id == ActorWire.invocation || message.id == ActorWire.call
            || message.id == ActorWire.introducingCall else {
            handler.fail(HarborActorSystemError(.invalidInvocation, "message id \(message.id) is not a call"))
            return
        }
        guard let actor = target.actor, let prefix = target.prefix else {
            handler.fail(HarborActorSystemError(.deadActor, "the actor was released"))
            return
        }
        let caller = message.trailer.sender.pid
        let box = MessageBox(message)
        let running = RunningCall()
        // On this thread, after this message (SystemExecutor): no hand-off.
        running.started(Task(executorPreference: executor) { [self] in
            await execute(box, on: actor, targetPrefix: prefix, handler: handler, caller: caller, number: number,
                          running: running)
        })
    }

    /// A call from a process that does not meet the system's caller
    /// requirement (D12): answered `callerRefused` unrun, through its
    /// send-once reply right, or, a call by number, through the reply right
    /// an introducing call brought (into the calling process), which is not
    /// kept; a call by number without one is dropped (no link is ever kept
    /// for such a caller).
    private func refused(_ message: consuming Message, _ requirement: HarborCallerRequirement) {
        var message = message
        let sender = message.trailer.sender
        let route: CallRoute
        if message.id == ActorWire.call || message.id == ActorWire.introducingCall {
            guard message.id == ActorWire.introducingCall, let number = ActorWire.takeNumber(from: &message),
                  ActorWire.takeNumber(from: &message) != nil else { return }
            let last = message.carriedRights.count - 1
            guard last >= 0, message.carriedRights[last] == .send, let right = try? message.takeSendRight(at: last),
                  right.receivingProcess?.pid == sender.pid else { return }
            route = .numbered(right, number)
        } else {
            guard let reply = message.takeReplyRight() else { return }
            route = .once(reply)
        }
        HarborResultHandler(route: route, system: self).fail(HarborActorSystemError(
            .callerRefused, "the caller (\(sender)) does not meet this system's requirement: \(requirement)"))
    }

    /// A cancel (D11): cancels the task of the call it names by number, if
    /// a call of that number from the cancel's own process (as the kernel
    /// says) is running here; anything else is dropped. Nothing answers a
    /// cancel: the call answers, once.
    private func cancelled(_ message: consuming Message) {
        var message = message
        guard message.content.body.count == ActorWire.numberSize, let number = ActorWire.takeNumber(from: &message) else {
            return
        }
        let key = RunningCallKey(pid: message.trailer.sender.pid, number: number)
        state.withLock { $0.running[key] }?.cancel()
    }

    /// Where a call by number's answer goes (D08): takes the number and
    /// the link id off its body and, for an introducing call, the send
    /// right to the caller's reply port (kept, charged to the caller's uid,
    /// only if it leads into the calling process); nil, dropping the call
    /// unrun, for a body too short, a link this system keeps no reply
    /// right for, or an introduction that is not a right into the caller.
    /// An introduction past its uid's share of links is answered `busy`
    /// through the right it brought, and dropped.
    private func callerRoute(of message: inout Message) -> CallRoute? {
        guard let number = ActorWire.takeNumber(from: &message),
              let linkID = ActorWire.takeNumber(from: &message) else { return nil }
        _ = message.takeReplyRight()        // a call by number is answered only by number
        let sender = message.trailer.sender
        let key = CallerKey(pid: sender.pid, link: linkID)
        if message.id == ActorWire.introducingCall {
            let last = message.carriedRights.count - 1
            guard last >= 0, message.carriedRights[last] == .send, let right = try? message.takeSendRight(at: last),
                  right.receivingProcess?.pid == sender.pid else { return nil }
            // A link kept already stays (its port is this one: the id is its
            // name in the caller); one whose port died (a pid and a name
            // used again by a new process) is replaced.
            if state.withLock({ $0.callers[key]?.right.isDead != false }) {
                let uid = UInt32(sender.uid)
                guard callerLinks.take(for: uid) else {
                    HarborResultHandler(route: .numbered(right, number), system: self).fail(HarborActorSystemError(
                        .busy, "uid \(uid) keeps \(Self.callerLinksPerUid) caller links in this system, or all "
                            + "callers \(Self.callerLinkLimit)"))
                    return nil
                }
                let (kept, replaced) = state.withLock { state -> (Bool, CallerLink?) in
                    guard !state.stopped, state.callers[key]?.right.isDead != false else { return (false, nil) }
                    let replaced = state.callers.removeValue(forKey: key)
                    if let replaced { state.callerPorts[replaced.right.name] = nil }
                    state.callers[key] = CallerLink(right: right, uid: uid)
                    state.callerPorts[right.name] = key
                    return (true, replaced)
                }
                if let replaced { callerLinks.give(for: replaced.uid) }
                if kept {
                    right.requestDeadNameNotification(to: notifications.makeSendOnceRight())
                } else {
                    callerLinks.give(for: uid)
                }
            }
        }
        guard let link = state.withLock({ $0.callers[key] }) else { return nil }
        return .numbered(link.right, number)
    }

    /// Decodes the call and runs it on `actor`; every failure is answered.
    /// A call by number (`callNumber`) may have a ``CompactInvocation``
    /// body. While it runs, a call that carries a number is `running` under its
    /// caller's pid and that number, where a cancel from the caller finds
    /// it (D11): registered before the task first suspends, so before this
    /// system's thread receives the next message.
    private func execute(_ box: MessageBox, on actor: any DistributedActor, targetPrefix: String,
                         handler: HarborResultHandler, caller: Int32, number callNumber: UInt64?,
                         running: RunningCall) async {
        guard var message = box.take() else { return }
        var key: RunningCallKey?
        defer {
            if let key {
                state.withLock { state in
                    if state.running[key] === running { state.running[key] = nil }
                }
            }
        }
        do {
            // A call by number's header comes before its arguments, in
            // bytes (`CompactInvocation`), or in the array as a first call's.
            let compact = try callNumber.flatMap { number throws(HarborActorSystemError) in
                try CompactInvocation.takeHeader(from: &message, number: number)
            }
            var reader = try MessageValueReader(message, userInfo: codingUserInfo)
            let header = try compact ?? reader.next(InvocationHeader.self)
            if let number = header.number {
                let running = running
                key = state.withLock { state -> RunningCallKey? in
                    let key = RunningCallKey(pid: caller, number: number)
                    // A number in use (a peer's second call with it) is not cancellable.
                    guard !state.stopped, state.running[key] == nil else { return nil }
                    state.running[key] = running
                    return key
                }
            }
            // The runtime finds a function by its name alone and would run
            // another type's function on this actor: only this type's run,
            // and a protocol stub's (D10) as this type's own.
            var selfType: (any Any.Type)?
            if !header.target.hasPrefix(targetPrefix) {
                guard StubCall.isStubCall(header) else {
                    throw HarborActorSystemError(.unknownTarget, "\(header.target) is not a function of \(type(of: actor))")
                }
                selfType = type(of: actor)
            }
            var decoder = HarborInvocationDecoder(reader: reader, header: header, selfType: selfType)
            // A non-generic function runs with its types resolved once
            // (`TargetTypes`); a generic one as the Distributed module runs it.
            if selfType == nil, let (types, kept) = TargetTypes.of(header.target) {
                try await types.execute(on: actor, decoder: &decoder, system: self, handler: handler, kept: kept)
            } else {
                try await executeDistributedTarget(on: actor, target: RemoteCallTarget(header.target),
                                                   invocationDecoder: &decoder, handler: handler)
            }
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
