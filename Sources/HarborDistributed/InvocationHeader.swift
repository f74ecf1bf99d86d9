// HarborDistributed — what a call names before its arguments.
/// The first value of an invocation's body: the function and the generic
/// substitutions, mangled as the Swift runtime names them.
struct InvocationHeader: Codable, Sendable {
    /// The distributed function (`RemoteCallTarget.identifier`).
    var target: String
    /// The mangled names of the generic substitutions, in order.
    var generics: [String]
    /// The call's number in the calling process (`CallNumber`): what a
    /// ``ActorWire/cancel`` from that process names it by (D11). Absent in
    /// a call from a peer that cannot cancel.
    var number: UInt64?
}
