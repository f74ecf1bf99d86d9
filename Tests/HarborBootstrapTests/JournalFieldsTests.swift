// Harbor — O11: every line the name server logs about a name carries the name, its scope and the
// process that caused it as fields, which harbord writes as journal fields (the real-systemd test
// reads them back with `journalctl HARBOR_NAME=…`).
import Glibc
import HarborBootstrap
import HarborPorts
import HarborSystem
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct JournalFieldsTests {
        /// O11: a check-in, a registration, an unregistration, a refused
        /// look-up and a holder's departure each log a line with `name`,
        /// `scope` and, where a process caused it, the kernel's `uid` and
        /// `pid`; lines about no name carry none.
        @Test func O11_everyLineAboutANameCarriesItsFields() throws {
            let fixture = try InProcessServer()
            let client = try fixture.client()
            let me = "uid=\(getuid()) pid=\(getpid())"
            let scope = "scope=user:\(getuid())"
            var held: ReceiveRight? = try client.checkIn("o11.checked")
            let published = ReceiveRight()
            try client.register("o11.registered", published.makeSendRight())
            try client.unregister("o11.registered")
            #expect(throws: BootstrapError.self) { _ = try client.lookUp("o11.nowhere") }
            held = nil
            _ = held
            let expected = [
                "checked in o11.checked (user \(getuid()), pid \(getpid()))\tname=o11.checked \(scope) \(me)",
                "registered o11.registered (user \(getuid()), pid \(getpid()))\tname=o11.registered \(scope) \(me)",
                "unregistered o11.registered (user \(getuid()), pid \(getpid()))\tname=o11.registered \(scope) \(me)",
                "look-up of unknown o11.nowhere by uid \(getuid()) (pid \(getpid()))\tname=o11.nowhere \(me)",
                "o11.checked (user \(getuid())): pid \(getpid()) is gone; name removed\tname=o11.checked \(scope) \(me)",
            ]
            let logged = pollUntil(timeout: .seconds(5), every: .milliseconds(20)) {
                expected.allSatisfy(fixture.fieldLog.all.contains)
            }
            #expect(logged, "\(fixture.fieldLog.all)")
            #expect(!fixture.fieldLog.all.contains { $0.hasPrefix("listening on") }, "\(fixture.fieldLog.all)")
        }
    }
}
