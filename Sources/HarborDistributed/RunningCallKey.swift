// HarborDistributed — which running call a cancel names.

/// A running call's key on the serving side (D11): the calling process, as
/// the kernel says, and the call's number, unique in that process. A
/// cancel names a call by its number and counts only from that process.
struct RunningCallKey: Hashable, Sendable {
    let pid: Int32
    let number: UInt64
}
