// Test support — a harbord process of a suite's own, on a temporary socket.
import Glibc
import Testing

/// A harbord process on a temporary socket (`--foreground`, an optional
/// policy file), stopped with SIGTERM and reaped when it goes. Suites add
/// their probes and a `BootstrapClient` for it in an extension.
public final class PrivateHarbord {
    /// The folder holding the socket, the policy and any probe copies.
    public let directory: TemporaryDirectory
    /// The socket harbord serves (what `HARBOR_BOOTSTRAP` names).
    public let socketPath: String
    /// The harbord process.
    public let child: Child

    /// Starts harbord and waits until it says it is ready.
    /// - Parameters:
    ///   - prefix: the temporary folder's name prefix.
    ///   - policy: a policy file's text (`shared NAME owner=UID`), if any.
    public init(prefix: String, policy: String? = nil) {
        directory = TemporaryDirectory(prefix: prefix)
        socketPath = directory.path + "/bootstrap.sock"
        var arguments = [builtExecutable("harbord"), "--foreground", "--socket", socketPath]
        if let policy { arguments += ["--policy", directory.write("policy.conf", policy)] }
        child = Child(arguments, environment: baseEnvironment())
        #expect(child.waitForStderr("ready ("), "harbord did not start")
    }

    private var copies: [String: String] = [:]

    /// A copy of the built executable `name` in ``directory``, which any uid
    /// can run wherever the build directory is; made once (a second copy
    /// over a running one would fail with ETXTBSY).
    public func reachableCopy(of name: String) -> String {
        if let copy = copies[name] { return copy }
        let copy = directory.copy(builtExecutable(name), as: name)
        copies[name] = copy
        return copy
    }

    /// The environment a client of this harbord runs with.
    public var clientEnvironment: [String] { baseEnvironment() + ["HARBOR_BOOTSTRAP=\(socketPath)"] }

    deinit {
        kill(child.pid, SIGTERM)
        _ = child.exitCode()
    }
}
