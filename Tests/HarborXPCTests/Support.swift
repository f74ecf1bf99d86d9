// HarborXPC tests — a private harbord, the probe service, the messages.
import Glibc
import HarborBootstrap
import HarborSystem
import HarborTestSupport
import HarborXPC
import Testing

/// Every XPC suite nests in here, so they run one at a time.
@Suite(.serialized, .deadline) struct XPCTests {}

/// What the tests send (the probe's `Ask`).
struct Ask: Codable, Sendable {
    var op: String
    var n: Int
}

/// What the probe answers (its `Answer`).
struct Answer: Codable, Sendable {
    var n: Int
    var uid: UInt32
    var pid: Int32
    var count: Int
}

extension PrivateHarbord {
    /// A harbord for one XPC test.
    convenience init(policy: String? = nil) { self.init(prefix: "harbor-xpc", policy: policy) }

    /// A client in this process.
    func client() throws -> BootstrapClient { try BootstrapClient(socketPath: socketPath) }

    /// harbor-xpc-probe `serve NAME REQUIREMENT`, once it says it is ready.
    func serve(_ name: String, requirement: String = "none") -> Child {
        let probe = Child([builtExecutable("harbor-xpc-probe"), "serve", name, requirement],
                          environment: clientEnvironment)
        #expect(probe.waitForStdout("ready \(name)"), "the probe service did not start")
        return probe
    }

    /// harbor-xpc-probe `call NAME N` as `nobody` (65534): a copy it can reach.
    func callAsNobody(_ name: String, _ n: Int) -> Child {
        Child(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", reachableCopy(of: "harbor-xpc-probe"), "call", name, "\(n)"],
              environment: clientEnvironment)
    }
}

/// The XPCRichError code `body` throws, or nil if it throws none.
func xpcCode(_ body: () throws -> Void) -> XPCRichError.Code? {
    do {
        try body()
        return nil
    } catch let error as XPCRichError {
        return error.code
    } catch {
        return nil
    }
}

/// A value set once from another thread, waited for with a deadline.
final class Latch<Value: Sendable>: Sendable {
    private let value = HarborLock<Value?>(nil)

    func set(_ newValue: Value) { value.withLock { $0 = newValue } }

    func wait(_ limit: Duration = .seconds(10)) -> Value? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let current = value.withLock({ $0 }) { return current }
            usleep(2_000)
        }
        return nil
    }
}
