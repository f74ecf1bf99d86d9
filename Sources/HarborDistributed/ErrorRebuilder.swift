// HarborDistributed — rebuilds a remote function's error as its own type.
import HarborCoding

/// Decodes a thrown error of one registered type out of a ``ActorWire/threw``
/// answer (``HarborActorSystem/registerErrorType(_:)``).
struct ErrorRebuilder: Sendable {
    let decode: @Sendable (inout MessageValueReader) throws(MessageCodingError) -> any Error

    init<E: Error & Decodable>(_ type: E.Type) {
        decode = { (reader: inout MessageValueReader) throws(MessageCodingError) -> any Error in
            try reader.next(E.self)
        }
    }
}
