// Harbor — test support: proving a test leaves no descriptor open.
import Testing

/// Runs `body` and records an issue if the process's open descriptors are not
/// back at their starting count afterwards.
public func expectNoDescriptorLeak<Result>(
    _ what: String = #function,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Result
) rethrows -> Result {
    let before = openDescriptorCount()
    let result = try body()
    let after = openDescriptorCount()
    #expect(after == before, "\(what): \(after - before) descriptor(s) left open", sourceLocation: sourceLocation)
    return result
}
