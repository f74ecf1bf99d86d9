// Harbor — PublisherStream: a piece of an XPC publisher (XPCPublisher.swift).
import HarborCoding
import HarborPorts
import HarborSystem

/// One subscriber's stream on the publisher's side: the send right to the
/// subscriber's port (the only one), the backlog the policy bounds, and the
/// thread that sends it, so a full port stalls this stream only.
final class PublisherStream<Event: Encodable & Sendable>: Sendable {
    let right: SendRight
    /// The subscriber's send-once right for the end of the stream.
    private let end: SessionWake
    let uid: UInt32
    let policy: XPCStreamPolicy
    /// The stream thread's doorbell: one wake waits at most.
    private let bell = ReceiveRight()
    private let ring: SendRight
    private let state = HarborLock(State())

    struct State: Sendable {
        var backlog: [Event] = []
        /// Why the stream ends, and whether the subscriber is told.
        var ending: (error: XPCRichError, tell: Bool)?
        var dropped = 0
    }

    init(right: SendRight, end: SessionWake, uid: UInt32, policy: XPCStreamPolicy) {
        self.right = right
        self.end = end
        self.uid = uid
        self.policy = policy
        try? bell.setQueueLimit(1)
        ring = bell.makeSendRight()
    }

    /// Events this stream lost to its policy.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Queues `event` as the policy says; never waits.
    func offer(_ event: Event) {
        let keep = policy.keep
        let wake = state.withLock { state -> Bool in
            guard state.ending == nil else { return false }
            if state.backlog.count >= keep {
                switch policy {
                case .dropNewest:
                    state.dropped += 1
                    return false
                case .dropOldest:
                    state.backlog.removeFirst()
                    state.dropped += 1
                case .wait:
                    state.ending = (XPCRichError(.connectionInvalid, "the subscriber fell \(keep) events behind"), true)
                    return true
                }
            }
            state.backlog.append(event)
            return true
        }
        if wake { ringBell() }
    }

    /// Ends the stream; `tell` sends the subscriber `error` (after what was published before).
    func end(_ error: XPCRichError, tell: Bool) {
        state.withLock { state in
            if state.ending == nil { state.ending = (error, tell) }
        }
        ringBell()
    }

    private func ringBell() { try? ring.send(Message(id: XPCWire.wake), timeout: .zero) }

    /// Ends the stream for a subscriber still there: what was published
    /// before the end, as far as the port has room now, then the end, on
    /// the send-once right (which a full port takes too).
    private func tell(_ error: XPCRichError) {
        let rest = state.withLock { state -> [Event] in
            defer { state.backlog = [] }
            return state.backlog
        }
        for event in rest {
            guard let message = try? MessageEncoder().encode(event, id: XPCWire.event) else { continue }
            do { try right.send(message, timeout: .zero) } catch { break }  // full: the end goes anyway
        }
        end.send(Message(id: XPCWire.streamEnd, text: "\(error.code.rawValue)\t\(error.reason)"))
    }

    /// The stream's thread: sends the backlog in order until the stream ends
    /// or the subscriber is gone.
    func run() {
        while true {
            do { _ = try bell.receive() } catch { return }
            while true {
                let next = state.withLock { state -> (Event?, (error: XPCRichError, tell: Bool)?) in
                    if let ending = state.ending { return (nil, ending) }
                    return (state.backlog.isEmpty ? nil : state.backlog.removeFirst(), nil)
                }
                if let ending = next.1 {
                    if ending.tell { tell(ending.error) }
                    return
                }
                guard let event = next.0 else { break }
                guard let message = try? MessageEncoder().encode(event, id: XPCWire.event) else {
                    state.withLock { $0.dropped += 1 }
                    continue
                }
                do {
                    try right.send(message, timeout: policy.sendTimeout)
                } catch where error.code == .timedOut {
                    let took = policy.sendTimeout ?? .zero
                    state.withLock { state in
                        if state.ending == nil {
                            state.ending = (XPCRichError(.connectionInvalid, "the subscriber took no event for \(took)"), true)
                        }
                    }
                } catch where error.code == .deadName {
                    return  // the subscriber is gone (its dead-name notification ends the subscription too)
                } catch {
                    state.withLock { $0.dropped += 1 }  // too large: this event only
                }
            }
        }
    }
}
