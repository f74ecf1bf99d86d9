// Harbor — SessionWake: a piece of an XPC listener (XPCListener.swift).
import HarborBootstrap
import HarborPorts
import HarborSystem

/// A send-once right that wakes one session's thread at most once.
final class SessionWake: Sendable {
    private let right: HarborLock<SendOnceRight?>

    init(_ right: consuming SendOnceRight) { self.right = HarborLock(Optional(right)) }

    /// Sends the wake message, if not sent before.
    func fire() { send(Message(id: XPCWire.wake)) }

    /// Sends `message` instead, if nothing was sent before (a publisher's
    /// end of a stream: a send-once message is not held to the port's
    /// queue limit, so it reaches a full port too).
    func send(_ message: consuming Message) {
        let taken: SendOnceRight? = right.withLock { $0.take() }
        switch consume taken {
        case .some(let right): try? right.send(message)
        case .none: break
        }
    }
}
