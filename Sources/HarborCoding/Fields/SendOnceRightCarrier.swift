// Harbor — a send-once right as a Codable field: a copyable box, taken once.
import HarborPorts
import HarborSystem

/// Holds a `SendOnceRight` so that it can be a field of a
/// Codable value, and moves it into (and out of) a message as a real
/// carried send-once right: the one answer it allows goes with it (a reply
/// channel as a field).
///
/// Why a carrier: a send-once right is `~Copyable` (one owner at a time),
/// and `Codable`, like every protocol that predates noncopyable types, is
/// for copyable types only, so a struct cannot hold a `SendOnceRight` and be
/// `Codable`. The carrier is a copyable, `Sendable` reference holding the
/// right until someone takes it, once: ``take()`` a second time throws
/// ``MessageCodingError/Code/rightAlreadyTaken`` instead of duplicating it.
///
/// ```swift
/// struct Ask: Codable { var answer: SendOnceRightCarrier }
/// let message = try MessageEncoder().encode(Ask(answer: SendOnceRightCarrier(replies.makeSendOnceRight())), id: 1)
/// // … on the other side:
/// try MessageDecoder().decode(Ask.self, from: received).answer.take().send(Message(id: 2))
/// ```
///
/// Encoding moves the right into the message (the carrier is then empty);
/// decoding makes a new carrier holding the right the message carried.
/// Dropping the last reference to a carrier that still holds its right
/// releases it unused, which sends its port a send-once notification (as
/// dropping a `SendOnceRight` does). Only ``MessageEncoder`` and ``MessageDecoder`` can
/// code a carrier; another coder (JSON) gets a typed error.
///
/// **Thread safety:** any thread; one ``take()`` wins.
public final class SendOnceRightCarrier: Codable, Sendable, RightCarrier {
    private let right: HarborLock<SendOnceToken?>

    /// Carries `right`.
    public init(_ right: consuming SendOnceRight) {
        self.right = HarborLock(right.token)
    }

    init(token: SendOnceToken) { right = HarborLock(token) }

    /// Takes the right out.
    /// - Throws: ``MessageCodingError/Code/rightAlreadyTaken`` if it was
    ///   taken before (or encoded into a message).
    public func take() throws(MessageCodingError) -> SendOnceRight {
        guard let token = right.withLockedValue({ $0.take() }) else {
            throw MessageCodingError(.rightAlreadyTaken, "the carrier's send-once right was already taken")
        }
        return SendOnceRight(token: token)
    }

    /// Whether the right was taken out (or encoded into a message).
    public var isTaken: Bool { right.withLockedValue { $0 == nil } }

    var kindName: String { "send-once right" }

    func takeCarried() -> CarriedRight? { right.withLockedValue { $0.take() }.map { .sendOnce($0) } }

    func restore(_ carried: CarriedRight) {
        guard case .sendOnce(let token) = carried else { return }
        right.withLockedValue { $0 = token }
    }

    /// Encodes the right as an index into the message's carried rights.
    /// - Throws: ``MessageCodingError`` unless the encoder is a ``MessageEncoder``'s.
    public func encode(to encoder: any Encoder) throws {
        let body = try BodyEncoder.of(encoder, encoding: "a send-once right")
        body.writeCarried(.sendOnceRight, index: try body.state.add(self, path: body.codingPath))
    }

    /// Takes the send-once right the body names out of the message.
    /// - Throws: ``MessageCodingError`` unless the decoder is a ``MessageDecoder``'s.
    public convenience init(from decoder: any Decoder) throws {
        let body = try BodyDecoder.of(decoder, decoding: "a send-once right")
        guard case .sendOnce(let token) = try body.state.takeRight(body.node, .sendOnceRight, path: body.codingPath) else {
            throw MessageCodingError(.invalidRightIndex, "not a send-once right", codingPath: body.codingPath)
        }
        self.init(token: token)
    }
}
