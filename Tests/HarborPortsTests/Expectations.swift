// Harbor — assertions shared by the port tests.
import Testing
@testable import HarborPorts
@testable import HarborTransport

/// Expects `body` to throw a ``PortError`` with `code`; returns the error.
@discardableResult
func expectPortError(
    _ code: PortError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> PortError? {
    do {
        try body()
        Issue.record("expected \(code), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as PortError {
        #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected PortError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
