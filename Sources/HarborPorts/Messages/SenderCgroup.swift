// Harbor — a message sender's cgroup as read at receipt, boxed in its trailer.
import HarborSystem

/// The cgroup v2 path of a message's sender, or the error that kept it from
/// being read (``MessageTrailer/senderCgroup``), held by reference so that
/// the trailers without one, almost all of them, stay plain values.
/// Compared and hashed by value.
final class SenderCgroup: Hashable, Sendable {
    let value: Result<String, SystemError>

    init(_ value: Result<String, SystemError>) { self.value = value }

    static func == (lhs: SenderCgroup, rhs: SenderCgroup) -> Bool { lhs.value == rhs.value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
