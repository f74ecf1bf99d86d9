// Harbor — a coder's coding path, made from the chain of coders when asked for.
import HarborPorts

/// An encoder or decoder that knows its value's key and the coder of the
/// value it is in: its coding path is made only when asked for (an error,
/// a value that reads it), not an array per field.
protocol CodingPathLink: AnyObject {
    /// The value's key in the value it is in; nil at the top level.
    var pathKey: (any CodingKey)? { get }
    /// The coder of the value this one's value is in.
    var pathParent: Self? { get }
}

extension CodingPathLink {
    /// The keys from the top-level value down to this coder's value.
    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var link: Self? = self
        while let current = link, let key = current.pathKey {
            path.append(key)
            link = current.pathParent
        }
        return path.reversed()
    }
}
