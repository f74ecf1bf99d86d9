// HarborDistributed — what a thrown error's answer says about it.
/// The first value of a ``ActorWire/threw`` answer.
struct ThrownHeader: Codable, Sendable {
    /// The error's type, mangled (matched against the caller's types).
    var type: String
    /// The error's type as people read it.
    var typeName: String
    /// `String(describing:)` of the error.
    var description: String
    /// Whether the error itself follows (it was `Encodable` and encoded).
    var hasValue: Bool
}
