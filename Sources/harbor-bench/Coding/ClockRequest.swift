// Harbor — the typical small request the codable-message benchmark codes.
import Harbor

/// A small request as a service would define it (issue 23's clock daemon:
/// subscribe to ticks): a method name, a sequence number, an interval, a
/// flag and a short list of topics; `events` is the send right a
/// subscription carries (the `+right` variants only).
struct ClockRequest: Codable {
    var method: String
    var sequence: UInt64
    var intervalMilliseconds: Int32
    var wantsAck: Bool
    var topics: [String]
    var events: SendRight?

    static func sample(events: SendRight?) -> ClockRequest {
        ClockRequest(method: "subscribe", sequence: 42, intervalMilliseconds: 1000, wantsAck: true,
                     topics: ["clock.tick", "clock.drift"], events: events)
    }

    /// Whether `other` says the same (so a variant that decoded nonsense fails).
    func matches(_ other: ClockRequest) -> Bool {
        method == other.method && sequence == other.sequence && intervalMilliseconds == other.intervalMilliseconds
            && wantsAck == other.wantsAck && topics == other.topics && (events == nil) == (other.events == nil)
    }
}
