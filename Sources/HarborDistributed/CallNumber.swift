// HarborDistributed — the numbers calls are known by.
import Synchronization

/// Numbers a process's calls: every call a system of this process sends
/// gets the next one, never reused in the process, so a number names one
/// call of one process (what an answer by number, D08, and a cancel, D11,
/// name it by; the serving side keys them with the caller's pid).
enum CallNumber {
    private static let last = Atomic<UInt64>(0)

    /// A number no call of this process had.
    static func next() -> UInt64 { last.add(1, ordering: .relaxed).newValue }
}
