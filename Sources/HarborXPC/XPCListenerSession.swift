// HarborXPC — one accepted session, on the listener's side: a port and a thread.
import HarborPorts
import HarborSystem

/// The listener's side of one session: the port made for it (the client
/// holds the only send right outside this process) and the thread that
/// serves it, one message at a time.
final class XPCListenerSession: Sendable {
    let port: ReceiveRight
    let peer: ProcessIdentity
    let requirement: XPCPeerRequirement?
    let handler: @Sendable (XPCReceivedMessage) -> (any Encodable)?
    let cancellation: (@Sendable (XPCRichError) -> Void)?

    init(peer: ProcessIdentity, requirement: XPCPeerRequirement?,
         handler: @escaping @Sendable (XPCReceivedMessage) -> (any Encodable)?,
         cancellation: (@Sendable (XPCRichError) -> Void)?) {
        port = ReceiveRight()
        self.peer = peer
        self.requirement = requirement
        self.handler = handler
        self.cancellation = cancellation
        // The client's send right is the only one outside: when it goes
        // (cancelled, dropped, or the client died), the session ends.
        port.requestNoSendersNotification(to: port.makeSendOnceRight())
    }

    /// Serves messages until the session ends; then calls the cancellation handler.
    func serve() {
        let me = ProcessIdentity.current.pid
        let end: XPCRichError
        serving: while true {
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
                end = XPCRichError(.connectionInvalid, "the listener was cancelled")
                break serving
            case XPCWire.message, XPCWire.request, XPCWire.subscribe:
                handle(message)
            default:
                continue  // not ours to answer; its reply right, if any, dies (send-once notification)
            }
        }
        cancellation?(end)
    }

    private func handle(_ message: consuming Message) {
        let received = XPCReceivedMessage(message)
        if let requirement, !requirement.isSatisfied(by: received.sender) {
            received.fail(XPCRichError(.peerRequirementNotMet,
                                       "\(received.sender) does not meet the requirement \(requirement)"))
            return
        }
        let result = handler(received)
        if let result, received.isAwaitingReply {
            do { try received.reply(result) } catch { received.fail(error) }
        }
    }
}
