// Harbor — where a process finds the name server, with no configuration.
import HarborPorts
import HarborSystem

/// The bootstrap socket's location.
///
/// A process finds the name server without configuration: the environment
/// variable ``environmentKey`` if set; otherwise the system socket
/// ``systemPath`` for root, and for other users their own
/// `$XDG_RUNTIME_DIR/harbor/bootstrap.sock` if a per-user `harbord` made
/// one, else the system socket (one `harbord` scopes names per uid).
///
/// **Darwin equivalent:** the bootstrap port every task inherits
/// (`bootstrap_port`, `task_get_special_port(TASK_BOOTSTRAP_PORT)`).
public enum BootstrapAddress {
    /// Overrides the socket path for clients: `HARBOR_BOOTSTRAP=/path/to/bootstrap.sock`.
    public static let environmentKey = "HARBOR_BOOTSTRAP"
    /// The system-wide socket, where the shipped systemd socket unit listens.
    public static let systemPath = "/run/harbor/bootstrap.sock"

    /// The socket a client connects to (see the type's description). Costs an
    /// environment look-up and at most one `access(2)`.
    public static var clientPath: String {
        if let value = ProcessControl.environmentValue(environmentKey), !value.isEmpty { return value }
        if ProcessControl.effectiveUserID == 0 { return systemPath }
        if let user = userPath, FileSystem.exists(user) { return user }
        return systemPath
    }

    /// The socket `harbord` listens on by default: the system socket for
    /// root, the per-user one otherwise (the system one if there is no
    /// `XDG_RUNTIME_DIR`).
    public static var serverPath: String {
        if ProcessControl.effectiveUserID == 0 { return systemPath }
        return userPath ?? systemPath
    }

    /// `$XDG_RUNTIME_DIR/harbor/bootstrap.sock`, if `XDG_RUNTIME_DIR` is set.
    public static var userPath: String? {
        guard let runtime = ProcessControl.environmentValue("XDG_RUNTIME_DIR"), !runtime.isEmpty else { return nil }
        return runtime + "/harbor/bootstrap.sock"
    }
}
