// HarborXPC tests — a connect with a deadline (X23).
import Glibc
import HarborBootstrap
import HarborSystem
import HarborTestSupport
import HarborXPC
import Testing

extension XPCTests {
    @Suite struct ConnectTimeouts {
        /// X23: a session with a connect timeout, asking a service that is
        /// stopped (SIGSTOP) but alive, throws `connectTimedOut` once the
        /// timeout has passed, not before and not much after; once the
        /// service runs again a session opens and is answered.
        @Test func X23_aConnectToAStoppedServiceTimesOutWithATypedError() throws {
            let harbord = PrivateHarbord()
            let service = harbord.serve("com.example.x23")
            let bootstrap = try harbord.client()
            kill(service.pid, SIGSTOP)
            let outcome = Latch<(XPCRichError.Code?, Duration)>()
            let started = ContinuousClock.now
            let connecting = SystemThread.start {
                let code = xpcCode {
                    _ = try XPCSession(machService: "com.example.x23", bootstrap: bootstrap, connectTimeout: .milliseconds(300))
                }
                outcome.set((code, ContinuousClock.now - started))
            }
            let result = outcome.wait(.seconds(5))
            kill(service.pid, SIGCONT)
            connecting.join()
            #expect(result?.0 == .connectTimedOut, "the connect to a stopped service: \(String(describing: result))")
            if let took = result?.1 {
                #expect(took >= .milliseconds(300) && took < .seconds(3), "the connect gave up after \(took)")
            }

            let session = try XPCSession(machService: "com.example.x23", bootstrap: bootstrap, connectTimeout: .seconds(5))
            #expect(try session.sendSync(Ask(op: "echo", n: 23)).decode(as: Answer.self).n == 23)
            session.cancel(reason: "done")
            _ = service
        }
    }
}
