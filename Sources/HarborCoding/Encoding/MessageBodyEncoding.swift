// Harbor — what a carried right, region or file encodes through: either body encoder.
import HarborPorts

/// An encoder of a message body, streaming (``StreamEncoder``) or building
/// a tree (``BodyEncoder``): what a `SendRight`, carrier, region or file
/// needs to encode itself as an index into what the message carries.
protocol MessageBodyEncoding: Encoder {
    /// The encoding's rights, regions and files.
    var state: EncodingState { get }
    /// Writes a carried right's, region's or file's index (`kind` its tag) as the encoder's value.
    func writeCarried(_ kind: MessageCodingFormat.Tag, index: Int)
}

extension BodyEncoder {
    /// The body encoder behind `encoder`, or a typed error saying that
    /// `what` (a right, a region) can be encoded only into a message.
    static func of(_ encoder: any Encoder, encoding what: String) throws(MessageCodingError) -> any MessageBodyEncoding {
        if let body = encoder as? StreamEncoder { return body }
        if let body = encoder as? BodyEncoder { return body }
        throw MessageCodingError(.invalidValue,
                                 "\(what) can be encoded only by a MessageEncoder, into a message, not by \(type(of: encoder))",
                                 codingPath: encoder.codingPath)
    }
}
