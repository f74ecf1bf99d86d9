// Harbor — helpers for the run-loop tests: the root suite, timing.
import Glibc
import HarborRunLoop
import HarborPorts
import HarborTestSupport
import Testing
import HarborSystem

/// Every run-loop suite nests in here, so they run one at a time and the
/// process-wide descriptor count means something in each of them.
@Suite(.serialized, .deadline) struct RunLoopTests {}


/// Milliseconds since an instant, for loose timing assertions.
func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}
