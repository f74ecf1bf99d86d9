// Harbor — a receive right as a Codable field: a copyable box, taken once.
import HarborPorts
import HarborSystem

/// Holds a `ReceiveRight` so that it can be a field of a
/// Codable value, and moves it into (and out of) a message as a real
/// carried receive right: the port, its queue and all, changes hands.
///
/// Why a carrier: a receive right is `~Copyable` (one owner at a time),
/// and `Codable`, like every protocol that predates noncopyable types, is
/// for copyable types only, so a struct cannot hold a `ReceiveRight` and be
/// `Codable`. The carrier is a copyable, `Sendable` reference holding the
/// right until someone takes it, once: ``take()`` a second time throws
/// ``MessageCodingError/Code/rightAlreadyTaken`` instead of duplicating it.
///
/// ```swift
/// struct Handover: Codable { var inbox: ReceiveRightCarrier }
/// let message = try MessageEncoder().encode(Handover(inbox: ReceiveRightCarrier(port)), id: 1)
/// // … on the other side:
/// let inbox = try MessageDecoder().decode(Handover.self, from: received).inbox.take()
/// ```
///
/// Encoding moves the right into the message (the carrier is then empty);
/// decoding makes a new carrier holding the right the message carried.
/// Dropping the last reference to a carrier that still holds its right
/// releases the right, which destroys the port (as dropping a
/// `ReceiveRight` does). Only ``MessageEncoder`` and ``MessageDecoder`` can
/// code a carrier; another coder (JSON) gets a typed error.
///
/// **Thread safety:** any thread; one ``take()`` wins.
public final class ReceiveRightCarrier: Codable, Sendable, RightCarrier {
    private let right: HarborLock<ReceiveRightToken?>

    /// Carries `right`.
    public init(_ right: consuming ReceiveRight) {
        self.right = HarborLock(right.token)
    }

    init(token: ReceiveRightToken) { right = HarborLock(token) }

    /// Takes the right out.
    /// - Throws: ``MessageCodingError/Code/rightAlreadyTaken`` if it was
    ///   taken before (or encoded into a message).
    public func take() throws(MessageCodingError) -> ReceiveRight {
        guard let token = right.withLockedValue({ $0.take() }) else {
            throw MessageCodingError(.rightAlreadyTaken, "the carrier's receive right was already taken")
        }
        return ReceiveRight(token: token)
    }

    /// Whether the right was taken out (or encoded into a message).
    public var isTaken: Bool { right.withLockedValue { $0 == nil } }

    var kindName: String { "receive right" }

    func takeCarried() -> CarriedRight? { right.withLockedValue { $0.take() }.map { .receive($0) } }

    func restore(_ carried: CarriedRight) {
        guard case .receive(let token) = carried else { return }
        right.withLockedValue { $0 = token }
    }

    /// Encodes the right as an index into the message's carried rights.
    /// - Throws: ``MessageCodingError`` unless the encoder is a ``MessageEncoder``'s.
    public func encode(to encoder: any Encoder) throws {
        let body = try BodyEncoder.of(encoder, encoding: "a receive right")
        body.writeCarried(.receiveRight, index: try body.state.add(self, path: body.codingPath))
    }

    /// Takes the receive right the body names out of the message.
    /// - Throws: ``MessageCodingError`` unless the decoder is a ``MessageDecoder``'s.
    public convenience init(from decoder: any Decoder) throws {
        let body = try BodyDecoder.of(decoder, decoding: "a receive right")
        guard case .receive(let token) = try body.state.takeRight(body.node, .receiveRight, path: body.codingPath) else {
            throw MessageCodingError(.invalidRightIndex, "not a receive right", codingPath: body.codingPath)
        }
        self.init(token: token)
    }
}
