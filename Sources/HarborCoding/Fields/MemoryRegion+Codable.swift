// Harbor — out-of-line memory as a Codable field, carried as a real region.
import HarborPorts

/// A region encodes as an index into the message's out-of-line regions:
/// the message carries the memory itself (a sealed memory file the
/// receiver maps read-only, or a private copy sent in fragments), never its
/// bytes in the body. Only ``MessageEncoder`` and ``MessageDecoder`` can
/// code one; another coder (JSON) gets a typed ``MessageCodingError``.
extension MemoryRegion: Codable {
    /// Makes a region of `buffer`'s bytes without copying them: the buffer
    /// is sealed (nobody can change the bytes any more) and its pages are
    /// what a receiver maps (P08).
    /// - Throws: a `PortError` when sealing fails.
    public init(sealing buffer: consuming OutOfLineBuffer) throws(PortError) {
        self.init(mapping: try buffer.seal())
    }

    /// Makes a region holding a private copy of `bytes` (another process
    /// receives it copied through the connection, P08).
    /// - Throws: a `PortError` when memory cannot be mapped.
    public init(copying bytes: UnsafeRawBufferPointer) throws(PortError) {
        do { self.init(mapping: try MappedRegion(copying: bytes)) } catch {
            throw PortError(error, "copying \(bytes.count) bytes into an out-of-line region")
        }
    }

    /// Encodes the region as an index into the message's out-of-line regions.
    /// - Throws: ``MessageCodingError`` unless the encoder is a ``MessageEncoder``'s.
    public func encode(to encoder: any Encoder) throws {
        let body = try BodyEncoder.of(encoder, encoding: "an out-of-line region")
        body.writeCarried(.region, index: try body.state.add(mapping, path: body.codingPath))
    }

    /// The region the body names, shared with the message.
    /// - Throws: ``MessageCodingError`` unless the decoder is a ``MessageDecoder``'s.
    public init(from decoder: any Decoder) throws {
        let body = try BodyDecoder.of(decoder, decoding: "an out-of-line region")
        self.init(mapping: try body.state.region(body.node, path: body.codingPath))
    }
}
