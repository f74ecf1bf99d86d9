// HarborDistributed — where a received call's answer goes.
import HarborPorts

/// How one received call is answered: through the send-once reply right
/// it carried (D01), or by number through the caller link's reply port
/// (D08), whose send right the system keeps.
enum CallRoute: ~Copyable, Sendable {
    /// The call's own send-once (or send) reply right.
    case once(ReplyRight)
    /// The caller's reply port, and the call's number, appended to the answer.
    case numbered(SendRight, UInt64)

    /// The call's number, for a call by number.
    var number: UInt64? {
        switch self {
        case .once: nil
        case .numbered(_, let number): number
        }
    }

    /// Sends `message` the way the call asked.
    consuming func send(_ message: consuming Message) {
        switch consume self {
        case .once(let right):
            try? right.send(message, timeout: .zero)
        case .numbered(let right, let number):
            var numbered = message
            ActorWire.append(number, to: &numbered)
            try? right.send(numbered, timeout: .zero)
        }
    }

    /// Ends a call nothing answered: a send-once right dropped tells its
    /// caller by itself (a send-once notification); a call by number is
    /// told with a failure.
    consuming func endUnanswered() {
        switch consume self {
        case .once:
            break
        case .numbered(let right, let number):
            CallRoute.numbered(right, number).send(
                ActorWire.failure(HarborActorSystemError(.invalidInvocation, "the call ended without an answer")))
        }
    }
}
