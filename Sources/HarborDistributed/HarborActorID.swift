// HarborDistributed — a distributed actor's identity: its port.
import Distributed
import HarborCoding
import HarborPorts

/// A distributed actor's identity in a ``HarborActorSystem``: the actor's
/// port.
///
/// The system that hosts an actor holds the port's receive right; every
/// other process, and every other system, reaches the actor through a send
/// right to it. An ID of a remote actor holds that send right, so it is a
/// reference: the actor stays alive while some ID of it does (anywhere),
/// and is released when the last one goes (a no-senders notification,
/// ``HarborActorSystem``). An ID of a local actor holds no right, so the
/// actor's own `id` does not keep it alive.
///
/// Two IDs are equal when they name the same port, whether or not they hold
/// a right to it.
///
/// **Coding.** An ID is `Codable` so that actor references can be passed as
/// arguments and results: with `HarborCoding` (`MessageEncoder`,
/// `MessageValueWriter`) it is a real send right carried by the message.
/// Encoding the ID of a local actor makes that right, which needs the
/// hosting system in the encoder's `userInfo` under
/// `CodingUserInfoKey.actorSystemKey` (the system's own encoders put it
/// there). Other encoders (JSON) refuse an ID: a port number would mean
/// nothing in another process.
///
/// **Thread safety:** a value; any thread.
public struct HarborActorID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The actor's port in this process.
    public let port: PortName
    /// The send right that reaches a remote actor; `nil` for an actor this
    /// process hosts.
    public let right: SendRight?

    /// The ID of a local actor, `port` being its receive right's name.
    init(local port: PortName) {
        self.port = port
        right = nil
    }

    /// The ID of the actor `right` reaches.
    public init(right: SendRight) {
        port = right.name
        self.right = right
    }

    /// Whether the ID holds a send right (a reference to a remote actor, or
    /// to a local one as another system sees it).
    public var isRemote: Bool { right != nil }

    public static func == (lhs: HarborActorID, rhs: HarborActorID) -> Bool { lhs.port == rhs.port }
    public func hash(into hasher: inout Hasher) { hasher.combine(port) }
    /// `actor@port#N`.
    public var description: String { "actor@\(port)" }

    /// Encodes the ID as a send right to the actor's port.
    /// - Throws: `EncodingError.invalidValue` for a local actor's ID when the
    ///   encoder has no ``HarborActorSystem`` hosting it in its `userInfo`,
    ///   or when that actor is gone; what the encoder throws for a
    ///   `SendRight` (`MessageCodingError` from any encoder but `HarborCoding`'s).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let right {
            try container.encode(right)
            return
        }
        guard let system = encoder.userInfo[.actorSystemKey] as? HarborActorSystem else {
            throw EncodingError.invalidValue(self, .init(
                codingPath: encoder.codingPath,
                debugDescription: "a local actor's ID encodes only with its HarborActorSystem in userInfo[.actorSystemKey]"))
        }
        guard let right = system.exportRight(for: port) else {
            throw EncodingError.invalidValue(self, .init(
                codingPath: encoder.codingPath,
                debugDescription: "\(self) is not an actor this system hosts (released, or another system's)"))
        }
        try container.encode(right)
    }

    /// Decodes the send right a message carried.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(right: try container.decode(SendRight.self))
    }
}
