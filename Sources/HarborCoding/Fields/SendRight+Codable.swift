// Harbor — a send right as a Codable field, carried as a real right.
import HarborPorts

/// A send right encodes as an index into the message's carried rights: the
/// message carries the right itself (a new reference to the same port, as
/// `Message.attach(_:)` does), never its name as bytes.
/// Only ``MessageEncoder`` and ``MessageDecoder`` can code one; another
/// coder (JSON) gets a typed ``MessageCodingError``.
extension SendRight: Codable {
    /// Encodes the right as an index into the message's carried rights.
    /// - Throws: ``MessageCodingError`` unless the encoder is a ``MessageEncoder``'s.
    public func encode(to encoder: any Encoder) throws {
        let body = try BodyEncoder.of(encoder, encoding: "a send right")
        body.writeCarried(.sendRight, index: try body.state.add(self, path: body.codingPath))
    }

    /// Takes the send right the body names out of the message.
    /// - Throws: ``MessageCodingError`` unless the decoder is a ``MessageDecoder``'s.
    public init(from decoder: any Decoder) throws {
        let body = try BodyDecoder.of(decoder, decoding: "a send right")
        guard case .send(let token) = try body.state.takeRight(body.node, .sendRight, path: body.codingPath) else {
            throw MessageCodingError(.invalidRightIndex, "not a send right", codingPath: body.codingPath)
        }
        self.init(token: token)
    }
}
