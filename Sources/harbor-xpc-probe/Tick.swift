// harbor-xpc-probe — Tick (main.swift).

/// One event of the probe's stream, and of the tests' publishers.
struct Tick: Codable, Sendable {
    var n: Int
}
