// HarborDistributed tests — a private harbord, the probe process, helpers.
import Glibc
import HarborBootstrap
import HarborDistributed
import HarborSystem
import HarborTestSupport
import Testing

/// Every distributed-actor suite nests in here, so they run one at a time.
@Suite(.serialized, .deadline) struct DistributedTests {}

extension PrivateHarbord {
    /// A harbord for one distributed-actor test.
    /// - Parameter policy: a policy file's text (`shared NAME owner=UID`), if any.
    convenience init(policy: String? = nil) { self.init(prefix: "harbor-actors", policy: policy) }

    /// A client in this process.
    func client() throws -> BootstrapClient { try BootstrapClient(socketPath: socketPath) }

    /// harbor-actor-probe `serve NAME`, once it says it is ready.
    func serve(_ name: String) -> Child {
        let probe = Child([builtExecutable("harbor-actor-probe"), "serve", name],
                          environment: clientEnvironment)
        #expect(probe.waitForStdout("ready \(name)"), "the probe service did not start")
        return probe
    }

    /// harbor-actor-probe `COMMAND NAME N` as uid and gid 65534 (`nobody`),
    /// started: a copy of the probe, which nobody can reach wherever the
    /// build directory is.
    func probeAsNobody(_ command: String, _ name: String, _ n: Int) -> Child {
        Child(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", reachableCopy(of: "harbor-actor-probe"), command, name, "\(n)"],
              environment: clientEnvironment)
    }
}

/// The `HarborActorSystemError` code `body` throws, or nil if it throws
/// none (or another error).
func actorCode(_ body: () async throws -> Void) async -> HarborActorSystemError.Code? {
    do {
        try await body()
        return nil
    } catch let error as HarborActorSystemError {
        return error.code
    } catch {
        return nil
    }
}

/// Polls `condition` every 2 ms until it holds or `limit` passes.
func eventually(_ limit: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
