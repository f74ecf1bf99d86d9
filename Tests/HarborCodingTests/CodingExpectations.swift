// Harbor — the coding tests' check that a call throws a MessageCodingError of one code.
import HarborCoding
import Testing

/// Expects `body` to throw a ``MessageCodingError`` whose code is `code`.
func expectCodingError(
    _ code: MessageCodingError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as MessageCodingError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
