// HarborDistributedProbe — an error that is not Codable.
/// An error the caller sees only as `HarborActorSystemError.Code.remoteError`.
public struct PlainProbeError: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "a plain probe error" }
}
