// HarborDistributed — a call by number waiting for its answer.
import HarborPorts

/// A call by number (D08) sent and not yet answered.
struct NumberedCall: Sendable {
    /// The actor's port (in this process): its dead-name notification fails the call.
    let actor: PortName
    /// The serving process: only its answers count.
    let pid: Int32
    /// Whether the call handed the reply port over.
    let introducing: Bool
    /// Where the answer goes, before `continuation` is resumed.
    let answer: MessageBox
    /// Resumed once the answer is in `answer`, or with the error that ended the call.
    let continuation: CheckedContinuation<Void, any Error>
}
