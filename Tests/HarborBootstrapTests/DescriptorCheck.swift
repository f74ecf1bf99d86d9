// Harbor — the descriptor-leak check for the bootstrap tests: it waits for client sessions to end first.
import HarborBootstrap
import HarborTestSupport
import Testing

/// `HarborTestSupport.expectNoDescriptorLeak`, after waiting for every
/// bootstrap session thread of this process to end.
///
/// A client's session outlives the client while one of its names lives,
/// and ends on its own thread once the last name's port died, closing the
/// session's ports there: a check that counted before that thread let go
/// would report them, at random. Declared in this module, it shadows the
/// support module's function, so every bootstrap test gets the wait.
func expectNoDescriptorLeak<Result>(
    _ what: String = #function,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Result
) rethrows -> Result {
    try HarborTestSupport.expectNoDescriptorLeak(what, sourceLocation: sourceLocation) {
        // `body`'s locals (clients, ports, children) are gone once it returns.
        let result = try body()
        #expect(BootstrapClient.waitUntilSessionsEnd(timeout: .seconds(5)),
                "\(what): a bootstrap session thread still runs 5 s after the test", sourceLocation: sourceLocation)
        return result
    }
}
