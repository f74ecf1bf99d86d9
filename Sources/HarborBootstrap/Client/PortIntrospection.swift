// Harbor — whether this process answers `harbor ports` (its introspection endpoint), and the switch to turn it off.
import Synchronization
import HarborSystem

/// Whether this process shows its ports to `harbor ports PID`.
///
/// A process that holds names has a session with the name server
/// (`BootstrapClient.checkIn(_:)`, `register(_:_:)`); the server forwards
/// `harbor ports` questions to it, from root or the process's own uid only,
/// and the session's thread answers with the process's ports: no thread,
/// port or wake-up of its own, nothing at all until asked.
///
/// On by default. Off when the environment variable `HARBOR_INTROSPECTION`
/// is `off`, `0`, `no` or `false` when the process first asks, or after
/// `PortIntrospection.isEnabled = false`; a question is then refused
/// (`harbor ports` exits 5).
///
/// **Thread safety:** any thread.
public enum PortIntrospection {
    private static let enabled = Atomic<Bool>(defaultEnabled())

    /// Whether this process answers (see the type's description).
    public static var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }

    /// What `HARBOR_INTROSPECTION` says (on unless it says off).
    private static func defaultEnabled() -> Bool {
        guard let value = ProcessControl.environmentValue("HARBOR_INTROSPECTION")?.lowercased() else { return true }
        return !["off", "0", "no", "false"].contains(value)
    }
}
