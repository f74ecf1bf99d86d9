// Harbor — any error a value's coding threw, as a MessageCodingError.
import HarborPorts

extension MessageCodingError {
    /// `error` itself if it is one; Swift's `DecodingError` and
    /// `EncodingError` (thrown by the standard library's conformances, and by
    /// values' own `init(from:)`) as the matching code; anything else as
    /// ``Code/invalidValue`` with the error kept in ``underlying``.
    static func wrapping(_ error: any Error) -> MessageCodingError {
        if let error = error as? MessageCodingError { return error }
        if let error = error as? DecodingError {
            switch error {
            case .typeMismatch(let type, let context):
                return MessageCodingError(.typeMismatch, "expected \(type): \(context.debugDescription)",
                                          codingPath: context.codingPath, underlying: context.underlyingError)
            case .valueNotFound(let type, let context):
                return MessageCodingError(.valueNotFound, "no \(type): \(context.debugDescription)",
                                          codingPath: context.codingPath, underlying: context.underlyingError)
            case .keyNotFound(let key, let context):
                return MessageCodingError(.keyNotFound, "no key \"\(key.stringValue)\": \(context.debugDescription)",
                                          codingPath: context.codingPath, underlying: context.underlyingError)
            case .dataCorrupted(let context):
                return MessageCodingError(.dataCorrupted, context.debugDescription,
                                          codingPath: context.codingPath, underlying: context.underlyingError)
            @unknown default:
                return MessageCodingError(.dataCorrupted, "\(error)", underlying: error)
            }
        }
        if let error = error as? EncodingError, case .invalidValue(_, let context) = error {
            return MessageCodingError(.invalidValue, context.debugDescription,
                                      codingPath: context.codingPath, underlying: context.underlyingError)
        }
        return MessageCodingError(.invalidValue, "the value's own coding threw", underlying: error)
    }
}
