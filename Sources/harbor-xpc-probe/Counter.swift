// harbor-xpc-probe — Counter (main.swift).
import Glibc
import HarborSystem
import HarborXPC

/// One session's own state: how many messages it has seen.
final class Counter: Sendable {
    let value = HarborLock(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
