// Harbor — the typed request and reply of the interface-call benchmark.

/// What a typed call carries each way: a sequence number the caller checks
/// and 64 bytes, the payload every other variant of `interface-call` echoes.
struct EchoCall: Codable, Sendable {
    var sequence: Int
    var data: [UInt8]
}
