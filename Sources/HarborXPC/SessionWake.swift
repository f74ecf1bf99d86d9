// Harbor — SessionWake: a piece of an XPC listener (XPCListener.swift).
import HarborBootstrap
import HarborPorts
import HarborSystem

/// A send-once right that wakes one session's thread at most once.
final class SessionWake: Sendable {
    private let right: HarborLock<SendOnceRight?>

    init(_ right: consuming SendOnceRight) { self.right = HarborLock(Optional(right)) }

    /// Sends the wake message, if not sent before.
    func fire() {
        let taken: SendOnceRight? = right.withLock { $0.take() }
        switch consume taken {
        case .some(let right): try? right.send(Message(id: XPCWire.wake))
        case .none: break
        }
    }
}
