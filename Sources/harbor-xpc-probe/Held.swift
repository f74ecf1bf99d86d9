// harbor-xpc-probe — Held (main.swift).
import Glibc
import HarborSystem
import HarborXPC

/// Messages a "hang" request leaves unanswered, kept so no reply ever comes.
final class Held: Sendable {
    let messages = HarborLock<[XPCReceivedMessage]>([])
}
