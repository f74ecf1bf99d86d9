// harbor-xpc-probe — Ask (main.swift).
import Glibc
import HarborSystem
import HarborXPC

/// What the tests send.
struct Ask: Codable, Sendable {
    var op: String
    var n: Int
}
