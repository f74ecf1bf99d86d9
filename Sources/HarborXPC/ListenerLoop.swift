// Harbor — ListenerLoop: a piece of an XPC listener (XPCListener.swift).
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem

/// The listener's thread: session requests, one at a time.
struct ListenerLoop: Sendable {
    let port: Listening
    let requirement: XPCPeerRequirement?
    /// What an introspection request is answered with (nil: `methodNotFound`);
    /// defaulted, so the `xpc` fuzz target's loop needs no interface.
    var interface: XPCInterface? = nil
    /// Where the handlers run (XPCHandlerTarget.swift); defaulted, as `interface`.
    var target: XPCHandlerTarget = .ownThread
    /// How long a numbered call's reply waits for room in the client's
    /// reply port before the session ends; defaulted, as `interface`.
    var replyTimeout: Duration = XPCListener.defaultReplyTimeout
    let handler: @Sendable (XPCListener.IncomingSessionRequest) -> XPCListener.IncomingSessionRequest.Decision
    let adopt: @Sendable (PortName, SessionWake) -> Bool
    let ended: @Sendable (PortName) -> Void
    /// Sessions held per uid (SessionShares.swift).
    let shares = SessionShares.make()

    func run() {
        let me = ProcessIdentity.current.pid
        let decisions = HandlerRunner(target, label: "XPCListener")
        while true {
            guard var message = try? port.port.receive() else { return }
            if message.id == XPCWire.wake, message.trailer.sender.pid == me, message.notification == nil { return }
            if message.id == XPCWire.introspect, message.hasReplyRight, message.notification == nil {
                answerIntrospection(&message)
                continue
            }
            guard message.id == XPCWire.connect, message.hasReplyRight, message.notification == nil else { continue }
            let peer = message.trailer.sender
            if let refusal = Self.refusal(of: message.trailer, by: requirement) {
                try? message.reply(refusal, timeout: .zero)
                continue
            }
            let uid = UInt32(peer.uid)
            guard shares.take(for: uid) else {
                let reason = "uid \(uid) holds \(SessionShares.perUid) sessions of this listener, or the listener "
                    + "\(SessionShares.total)"
                try? message.reply(Message(id: XPCWire.rejected, text: XPCWire.reason(reason)), timeout: .zero)
                continue
            }
            let request = XPCListener.IncomingSessionRequest(peer: peer), handler = self.handler
            let decision = decisions.value { handler(request) }
                ?? request.reject(reason: "the listener's handler target has ended")
            switch decision.kind {
            case .reject(let reason):
                shares.give(for: uid)
                try? message.reply(Message(id: XPCWire.rejected, text: XPCWire.reason(reason)), timeout: .zero)
            case .accept(let messageHandler, let cancellation):
                let session = XPCListenerSession(peer: peer, requirement: requirement,
                                                 replies: Self.replyPort(of: &message, peer: peer),
                                                 runner: HandlerRunner(target, label: "XPCListener session"),
                                                 replyTimeout: replyTimeout, handler: messageHandler, cancellation: cancellation)
                // A send-once right wakes the session at cancel(): it does
                // not count as a sender, so the client's right stays the
                // only one and its going is the session's no-senders.
                let name = session.port.name
                guard adopt(name, SessionWake(session.port.makeSendOnceRight())) else {
                    shares.give(for: uid)
                    return
                }
                var accepted = Message(id: XPCWire.accepted)
                accepted.attach(session.port.makeSendRight())
                do {
                    try message.reply(accepted, timeout: .zero)
                } catch {
                    ended(name)
                    shares.give(for: uid)
                    continue  // the client is gone; the session's port dies with it
                }
                let ended = self.ended, shares = self.shares
                guard (try? SystemThread.spawn({ session.serve(); ended(name); shares.give(for: uid) }).detach()) != nil else {
                    ended(name)
                    shares.give(for: uid)
                    continue
                }
            }
        }
    }

    /// Answers an introspection request (XPC.md, "Interfaces and tools") from
    /// a sender the requirement admits, without opening a session.
    private func answerIntrospection(_ message: inout Message) {
        let answer: Message
        if let refusal = Self.refusal(of: message.trailer, by: requirement) {
            answer = refusal
        } else if let interface, let encoded = try? MessageEncoder().encode(interface, id: XPCWire.interface) {
            answer = encoded
        } else {
            answer = Message(id: XPCWire.failure,
                             text: "\(XPCRichError.Code.methodNotFound.rawValue)\tthe listener publishes no interface")
        }
        try? message.reply(answer, timeout: .zero)
    }

    /// The failure (`code TAB reason`) that refuses the sender `trailer`
    /// names, if `requirement` does: not met, or not decidable
    /// (``XPCRichError/Code/peerIdentityUnavailable``).
    static func refusal(of trailer: MessageTrailer, by requirement: XPCPeerRequirement?) -> Message? {
        do throws(XPCRichError) {
            try requirement?.check(trailer)
            return nil
        } catch {
            return Message(id: XPCWire.failure, text: "\(error.code.rawValue)\t\(error.reason)")
        }
    }

    /// The send right to the client's session reply port a connect carries
    /// as right 0, if it leads into the asking process (a peer cannot make
    /// the session answer into a third process's port); nil otherwise.
    static func replyPort(of message: inout Message, peer: ProcessIdentity) -> SendRight? {
        guard message.carriedRights.first == .send, let right = try? message.takeSendRight(at: 0),
              right.receivingProcess?.pid == peer.pid else { return nil }
        return right
    }
}
