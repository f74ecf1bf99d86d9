// HarborXPC — asking a listener for its published interface.
import HarborBootstrap
import HarborCoding
import HarborPorts

extension XPCInterface {
    /// Asks the listener of `service` for its interface (`harbor
    /// introspect`): one request to the listener's port with a send-once
    /// reply right (wire id `…0C`), no session. The listener answers any
    /// process its requirement admits.
    ///
    /// The answer is decoded as hostile input (a body of at most 64 KiB,
    /// nested at most 64 deep, `Docs/Coding.md`).
    ///
    /// - Parameters:
    ///   - service: the harbord name.
    ///   - bootstrap: the name server client; `nil` connects as `BootstrapClient()` does.
    ///   - timeout: how long to wait for the answer.
    /// - Throws: ``XPCRichError``: `serviceNotFound` (no such name, or no
    ///   harbord), `methodNotFound` (the listener publishes no interface),
    ///   `peerRequirementNotMet` (its requirement refused this process),
    ///   `connectionInterrupted` (it died, or dropped the request: a listener
    ///   from before interfaces), `noReply` (no answer within `timeout`),
    ///   `codingFailed` (the answer is not an interface).
    public static func introspect(
        _ service: String, bootstrap: BootstrapClient? = nil, timeout: Duration = .seconds(5)
    ) throws(XPCRichError) -> XPCInterface {
        let right: SendRight
        do {
            right = try (bootstrap ?? BootstrapClient()).lookUp(service)
        } catch let error as BootstrapError {
            throw XPCRichError(.serviceNotFound, "\(service): \(error.detail)")
        } catch {
            throw XPCRichError(.serviceNotFound, "\(service): \(error)")
        }
        let replies = ReceiveRight()
        var request = Message(id: XPCWire.introspect)
        request.setReplyRight(replies.makeSendOnceRight())
        do {
            try right.send(request, timeout: timeout)
        } catch {
            throw XPCRichError(.connectionInterrupted, "\(service) is gone: \(error.code)")
        }
        var reply: Message
        do {
            reply = try replies.receive(timeout: timeout)
        } catch {
            throw XPCRichError(.noReply, "\(service) did not answer within \(timeout): \(error.code)")
        }
        if reply.notification != nil {
            throw XPCRichError(.connectionInterrupted,
                               "\(service) dropped the request (it died, or its listener cannot introspect)")
        }
        if reply.id == XPCWire.failure { throw XPCSession.failure(reply.text) }
        guard reply.id == XPCWire.interface else {
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to an introspection request")
        }
        do {
            return try MessageDecoder().decode(XPCInterface.self, from: &reply)
        } catch {
            throw XPCRichError(.codingFailed, "the answer is not an interface: \(error)")
        }
    }
}
