// Harbor — P12: out of descriptors, harbord backs off accepting and logs once per episode, not every retry.
import HarborBootstrap
import Testing

extension BootstrapTests {
    @Suite struct AcceptBackoffTests {
        /// P12: an episode's first failure is logged and pauses 100 ms; each
        /// repeat is not logged, doubles the pause and stops at 5 s.
        @Test func P12_outOfDescriptorsLogsOnceAndBacksOffToAFewSeconds() {
            var backoff = AcceptBackoff()
            let first = backoff.failed()
            #expect(first.log && first.pause == .milliseconds(100))
            var pauses: [Duration] = []
            for _ in 0..<9 {
                let next = backoff.failed()
                #expect(!next.log, "a repeat within the episode was logged")
                pauses.append(next.pause)
            }
            #expect(pauses == [200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000].map { Duration.milliseconds($0) })
            #expect(backoff.suppressed == 9)
        }

        /// P12: a connection accepted again ends the episode and reports how
        /// many failures were not logged; the next failure starts a new
        /// episode, logged, at 100 ms.
        @Test func P12_aSuccessfulAcceptReportsTheSuppressedCountAndResets() {
            var backoff = AcceptBackoff()
            #expect(backoff.succeeded() == nil, "recovery reported with no episode going on")
            for _ in 0..<4 { _ = backoff.failed() }
            #expect(backoff.succeeded() == 3)
            #expect(backoff.succeeded() == nil, "recovery reported twice")
            #expect(backoff.pause == nil && backoff.suppressed == 0)
            let again = backoff.failed()
            #expect(again.log && again.pause == .milliseconds(100))
            _ = backoff.failed()
            #expect(backoff.succeeded() == 1)
        }
    }
}
