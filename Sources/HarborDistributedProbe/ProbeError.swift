// HarborDistributedProbe — the error ProbeCounter throws.
/// A `Codable` error, rethrown at the caller as itself.
public enum ProbeError: Error, Codable, Equatable {
    case refused(reason: String)
}
