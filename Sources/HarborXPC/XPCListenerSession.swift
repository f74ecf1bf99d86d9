// HarborXPC — one accepted session, on the listener's side: a port and a thread.
import HarborPorts
import HarborSystem

/// The listener's side of one session: the port made for it (the client
/// holds the only send right outside this process) and the thread that
/// serves it, one message at a time, each handled on the session's
/// ``HandlerRunner`` while the thread waits. A numbered call's reply that
/// waits longer than `replyTimeout` for room in the client's reply port
/// ends the session (``XPCRichError/Code/replyTimedOut``): a client that
/// stops reading cannot hold the thread.
final class XPCListenerSession: Sendable {
    let port: ReceiveRight
    let peer: ProcessIdentity
    let requirement: XPCPeerRequirement?
    let handler: @Sendable (XPCReceivedMessage) -> (any Encodable)?
    let cancellation: (@Sendable (XPCRichError) -> Void)?
    /// The client's session reply port, given at connect: numbered calls
    /// (``XPCWire/call``) are answered through it. Nil for a client that
    /// gave none; its numbered calls are dropped.
    let replies: SendRight?
    /// Where the handlers run (the listener's ``XPCHandlerTarget``, serial for this session).
    let runner: HandlerRunner
    /// How long a numbered call's reply waits for room in `replies`.
    let replyTimeout: Duration
    /// Why the session ends because a reply waited in vain, once one did.
    private let stalled = HarborLock<XPCRichError?>(nil)
    /// Wakes the session's thread when a reply sent after its handler
    /// returned waited in vain (a send-once right: not a sender, and not
    /// held to the queue limit a client's flood fills).
    private let stallWake: SessionWake

    init(peer: ProcessIdentity, requirement: XPCPeerRequirement?, replies: SendRight?, runner: HandlerRunner,
         replyTimeout: Duration,
         handler: @escaping @Sendable (XPCReceivedMessage) -> (any Encodable)?,
         cancellation: (@Sendable (XPCRichError) -> Void)?) {
        port = ReceiveRight()
        if requirement?.needsCgroup == true { port.readSenderCgroups() }
        stallWake = SessionWake(port.makeSendOnceRight())
        self.replyTimeout = replyTimeout
        self.peer = peer
        self.requirement = requirement
        self.handler = handler
        self.cancellation = cancellation
        self.replies = replies
        self.runner = runner
        // The client's send right is the only one outside: when it goes
        // (cancelled, dropped, or the client died), the session ends.
        port.requestNoSendersNotification(to: port.makeSendOnceRight())
    }

    /// Serves messages until the session ends; then calls the cancellation handler.
    func serve() {
        let me = ProcessIdentity.current.pid
        let end: XPCRichError
        serving: while true {
            if let stalled = stalled.withLock({ $0 }) {
                end = stalled
                break
            }
            let message: Message
            do { message = try port.receive() } catch {
                end = XPCRichError(.connectionInvalid, "the session port failed: \(error.code)")
                break
            }
            if let notification = message.notification {
                if case .noSenders = notification {
                    end = XPCRichError(.connectionInvalid, "the client went away")
                    break serving
                }
                continue
            }
            switch message.id {
            case XPCWire.cancel:
                end = XPCRichError(.connectionInvalid, "the client cancelled the session")
                break serving
            case XPCWire.wake where message.trailer.sender.pid == me:
                end = stalled.withLock { $0 } ?? XPCRichError(.connectionInvalid, "the listener was cancelled")
                break serving
            case XPCWire.message, XPCWire.request, XPCWire.subscribe:
                handle(XPCReceivedMessage(message))
            case XPCWire.call:
                handleCall(message)
            default:
                continue  // not ours to answer; its reply right, if any, dies (send-once notification)
            }
        }
        if let cancellation { runner.run { cancellation(end) } }
    }

    /// A numbered call: answered through the client's reply port with its
    /// number. One with no number, or on a session without a reply port,
    /// is dropped; a reply right it carries is dropped too (a numbered call
    /// is answered only by number).
    private func handleCall(_ message: consuming Message) {
        guard let replies, let number = XPCWire.takeNumber(from: &message) else { return }
        _ = message.takeReplyRight()
        let route = XPCReceivedMessage.NumberedReply(right: replies, number: number, timeout: replyTimeout) {
            [weak self] error in self?.stall(error)
        }
        handle(XPCReceivedMessage(message, route: route))
    }

    /// A reply waited in vain for room in the client's reply port: the
    /// session ends with `error` once its handler returns, or at once if
    /// its thread waits for a message (a reply sent later, off the handler).
    private func stall(_ error: XPCRichError) {
        stalled.withLock { if $0 == nil { $0 = error } }
        stallWake.fire()
    }

    /// Judges `received` by its sender here, then runs the handler on the
    /// session's target and waits for it; a message the target could not
    /// run (its loop ended) is released unanswered (`noReply`).
    private func handle(_ received: XPCReceivedMessage) {
        do throws(XPCRichError) {
            try requirement?.check(received.trailer)
        } catch {
            received.fail(error)
            return
        }
        let handler = self.handler
        runner.run {
            let result = handler(received)
            if let result, received.isAwaitingReply {
                do throws(XPCRichError) { try received.reply(result) } catch { received.fail(error) }
            }
        }
    }
}
