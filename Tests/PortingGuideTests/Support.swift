// Harbor — what the porting-guide tests share: a recorder for a snippet's `print`, and a fresh thread per snippet.
import HarborPorts
import HarborTestSupport
import Testing
import HarborSystem

/// Every suite of this target nests in here, so they run one at a time and
/// the descriptor checks see no other test's threads.
@Suite(.serialized, .deadline) struct PortingGuideTests {}

/// What a snippet printed, in order, from any thread.
final class Printed: Sendable {
    private let lines = HarborLock<[String]>([])
    /// The `print` handed to a snippet.
    var print: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    var all: [String] { lines.withLock { $0 } }
}

/// Runs `snippet` on a fresh thread (so it gets a fresh `Loop.current`, torn
/// down when the thread exits), checks that no descriptor outlives it, and
/// returns what it printed, with the error it threw as a last line.
func run(
    checkingDescriptors: Bool = true,
    _ snippet: @escaping @Sendable (@escaping @Sendable (String) -> Void) throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [String] {
    let printed = Printed()
    let body = {
        TestThread {
            do { try snippet(printed.print) } catch { printed.print("threw: \(error)") }
        }.join()
    }
    if checkingDescriptors { expectNoDescriptorLeak(sourceLocation: sourceLocation, body) } else { body() }
    return printed.all
}
