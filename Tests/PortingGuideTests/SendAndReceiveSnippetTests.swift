// Harbor — Porting.md's combined send-and-receive snippet, run, with what it must print.
import HarborTestSupport
import Testing

extension PortingGuideTests {
    @Suite struct SendAndReceiveSnippetTests {
        @Test func P04_P07_machSendAndReceive() {
            #expect(run(Snippets.machSendAndReceive) == [
                "reply 107: pong to ping",
                "reply 101: pong to call 1",
                "reply 102: pong to call 2",
                "MACH_SEND_TIMED_OUT: timed out, request 8 given back, nothing received",
                "MACH_RCV_TIMED_OUT: timed out, the request was sent",
            ])
        }
    }
}
