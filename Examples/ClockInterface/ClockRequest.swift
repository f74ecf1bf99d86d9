// Examples — what a client asks the clock service (the XPC session pair).

// snippet: service-messages
/// A request to the clock service, sent as a Codable message
/// (`XPCSession.sendSync(_:)`, `XPCSession.subscribe(_:as:)`).
public enum ClockRequest: Codable, Sendable, Equatable {
    /// The time now: answered at once with a ``ClockTime``.
    case now
    /// The time once `seconds` have passed: answered then (at most an hour).
    case alarm(seconds: Int)
    /// A ``ClockTime`` each second, until the subscriber goes away.
    case subscribe
}
// end snippet
