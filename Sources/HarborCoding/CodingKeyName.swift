// Harbor — the coding keys the coder makes itself: array indices and "super".
import HarborPorts

/// A key for a coding path: an unkeyed container's index, or `super`.
struct CodingKeyName: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    init(index: Int) { self.init(intValue: index) }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = CodingKeyName(stringValue: "super")
}
