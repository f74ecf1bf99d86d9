// Harbor — the coding keys the coder makes itself: array indices and "super".
import HarborPorts

/// A key for a coding path: an unkeyed container's index, or `super`. An
/// index's name is made only when asked for (an error's path), not for
/// every element.
struct CodingKeyName: CodingKey {
    private let name: String?
    let intValue: Int?

    var stringValue: String { name ?? "\(intValue ?? 0)" }

    init(stringValue: String) {
        name = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        name = nil
        self.intValue = intValue
    }

    init(index: Int) { self.init(intValue: index) }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = CodingKeyName(stringValue: "super")
}
