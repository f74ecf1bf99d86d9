// Harbor — test support: proving a test leaves no descriptor open.
import HarborPorts
import HarborSystem
import Testing
import HarborTransport

/// Runs `body` and records an issue for every descriptor that was opened
/// while it ran and is still open afterwards.
///
/// It compares descriptor numbers, not counts: work left over from an
/// earlier test (a thread finishing its teardown, Foundation's `Process`
/// closing a pipe) may close older descriptors meanwhile, which is not this
/// test's leak, and a count would mistake it for one (or let it hide one).
public func expectNoDescriptorLeak<Result>(
    _ what: String = #function,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Result
) rethrows -> Result {
    let before = openDescriptors()
    let result = try body()
    // A notification the death-watch thread delivered may have reached the
    // test before that thread let go of the port it came from: let its pass
    // end, so a port the test dropped is really gone when counted.
    _ = RemoteDeathWatch.shared.waitUntilQuiescent(timeout: .seconds(5))
    let leaked = openDescriptors().subtracting(before)
    #expect(leaked.isEmpty, "\(what): descriptor(s) \(leaked.sorted()) left open: \(describe(leaked))",
            sourceLocation: sourceLocation)
    return result
}

/// Whether `fd` polls readable right now.
public func isReadable(_ fd: CInt) -> Bool {
    (try? waitUntilReadable(fd, deadline: .immediately)) ?? false
}
