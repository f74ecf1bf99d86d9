// HarborXPC — the shape of a method's request or reply, as an interface publishes it.
import HarborCoding

/// The shape of a value a method takes or gives, as ``XPCInterface``
/// publishes it: field names and kinds, JSON's shapes plus byte strings
/// (varlink's interface types, in HarborCoding's terms).
///
/// Declare it, or derive it from a sample value with
/// ``init(describing:)``. A sample shows only what it holds: a field that
/// is nil in the sample is not listed (HarborCoding leaves nil fields
/// out), an empty array's element is ``any``, an enum shows the sample's
/// case, and unsigned integers show as ``int``. Declare the type where
/// that is not enough.
///
/// **Thread safety:** a value; any thread.
public indirect enum XPCType: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Not known (a nil sample, an empty array's element).
    case any
    /// A Boolean.
    case bool
    /// An integer, signed or unsigned.
    case int
    /// A floating-point number.
    case double
    /// A string.
    case string
    /// A byte string (`[UInt8]`).
    case bytes
    /// An array of one element type.
    case array(XPCType)
    /// A struct: its fields by name.
    case object([String: XPCType])
    /// A field that may be left out (nil).
    case optional(XPCType)

    /// The shape of `sample`, found by encoding it (``XPCValue/shape``).
    /// - Throws: ``XPCRichError/Code/codingFailed`` if it does not encode,
    ///   or holds a right, a region or a file descriptor.
    public init(describing sample: some Encodable) throws(XPCRichError) {
        do {
            let message = try MessageEncoder().encode(sample, id: 0)
            self = try MessageDecoder().decode(XPCValue.self, from: message).shape
        } catch {
            throw XPCRichError(.codingFailed, "the sample has no shape a tool can show: \(error)")
        }
    }

    /// Varlink-like text: `(n: int, op: string)`, `[]int`, `?string`,
    /// `bytes`; an object's fields in name order.
    public var description: String {
        switch self {
        case .any: "any"
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .string: "string"
        case .bytes: "bytes"
        case .array(let element): "[]" + element.description
        case .object(let fields):
            "(" + fields.keys.sorted().map { "\($0): \((fields[$0] ?? .any).description)" }.joined(separator: ", ") + ")"
        case .optional(let wrapped): "?" + wrapped.description
        }
    }
}
