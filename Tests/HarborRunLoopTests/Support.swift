// Harbor — helpers for the run-loop tests: fresh threads, event logs, gates.
import Glibc
import HarborRunLoop
import HarborPorts
import HarborTestSupport
import Testing
import HarborSystem

/// Every run-loop suite nests in here, so they run one at a time and the
/// process-wide descriptor count means something in each of them.
@Suite(.serialized) struct RunLoopTests {}

/// An ordered log of what happened, written from any thread.
final class EventLog: Sendable {
    private let entries = HarborLock<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
    func count(of entry: String) -> Int { all.filter { $0 == entry }.count }
}

/// Milliseconds since an instant, for loose timing assertions.
func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}
