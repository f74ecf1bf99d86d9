// HarborDistributed — a call waiting for its answer.
import HarborPorts

/// A call sent and not yet answered: its reply port (whose send-once right
/// the request carries) and the caller's continuation.
struct PendingCall: Sendable {
    /// The port the answer, or the send-once notification, arrives at.
    let port: PortBox
    /// Where the answer goes, before `continuation` is resumed.
    let answer: MessageBox
    /// Resumed once the answer is in `answer`, or with the error that ended the call.
    let continuation: CheckedContinuation<Void, any Error>
}
