// Examples — the harbord names the clock examples serve under.

/// The names the clock examples check in or serve under, and look up.
public enum ClockNames {
    /// The XPC listener's name (`clock-service`).
    public static let service = "com.example.clock"
    /// The distributed actor's name (`clock-actor-service`).
    public static let actor = "com.example.clock.actor"
}
