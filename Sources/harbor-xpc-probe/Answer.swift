// harbor-xpc-probe — Answer (main.swift).
import Glibc
import HarborSystem
import HarborXPC

/// What the service answers: the number, and who asked (the kernel's word).
struct Answer: Codable, Sendable {
    var n: Int
    var uid: UInt32
    var pid: Int32
    var count: Int
}
