// HarborDistributed — the caller's side of cancelling one call.
import HarborPorts
import HarborSystem

/// One call's cancellation, on the caller's side (D11): the call's task
/// was cancelled while it waited, so the serving system is asked, with one
/// ``ActorWire/cancel`` message to the actor's port, to cancel the task
/// running the call. The message goes once, after the call itself, which
/// it follows in the port's queue: when the task is cancelled before the
/// call was sent, it goes as soon as the call went.
final class CallCancellation: Sendable {
    private struct Progress {
        var sent = false
        var cancelled = false
        var told = false
    }

    /// The call's number (its header's, and a call by number's).
    let number: UInt64
    private let right: SendRight
    private let progress = HarborLock(Progress())

    init(number: UInt64, right: SendRight) {
        self.number = number
        self.right = right
    }

    /// The call went to the actor's port.
    func sent() {
        if progress.withLock({ $0.sent = true; return tell(&$0) }) { send() }
    }

    /// The caller's task was cancelled.
    func cancel() {
        if progress.withLock({ $0.cancelled = true; return tell(&$0) }) { send() }
    }

    /// Whether the cancel goes now: once, when the call went and was cancelled.
    private func tell(_ progress: inout Progress) -> Bool {
        guard progress.sent, progress.cancelled, !progress.told else { return false }
        progress.told = true
        return true
    }

    /// Sends the cancel; an actor queue without room is retried every
    /// millisecond, for at most a second, from a task.
    private func send() {
        var message = Message(id: ActorWire.cancel)
        ActorWire.append(number, to: &message)
        do throws(PortError) {
            try right.send(message, timeout: .zero)
        } catch {
            guard error.code == .queueFull else { return }
            let right = right, number = number
            Task {
                for _ in 0..<1000 {
                    try? await Task.sleep(for: .milliseconds(1))
                    var retry = Message(id: ActorWire.cancel)
                    ActorWire.append(number, to: &retry)
                    do throws(PortError) {
                        try right.send(retry, timeout: .zero)
                        return
                    } catch {
                        if error.code != .queueFull { return }
                    }
                }
            }
        }
    }
}
