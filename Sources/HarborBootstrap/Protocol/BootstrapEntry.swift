// Harbor — one line of the name server's listing.
import Glibc  // types only: pid_t, uid_t
import HarborPorts

/// A name the name server knows, as `list` reports it.
///
/// **Darwin equivalent:** a line of `launchctl print` / `bootstrap_info`.
public struct BootstrapEntry: Hashable, Sendable, CustomStringConvertible {
    /// Whose namespace the name is in.
    public enum Scope: Hashable, Sendable, CustomStringConvertible {
        /// Visible to one uid only.
        case user(uid_t)
        /// Visible to every uid (declared shared in the policy file).
        case shared
        public var description: String {
            switch self {
            case .user(let uid): "user \(uid)"
            case .shared: "shared"
            }
        }
    }

    /// Where the name's port is now.
    public enum State: String, Hashable, Sendable, CustomStringConvertible {
        /// Declared, its receive right held by the name server: messages wait for the service.
        case waiting
        /// Checked in: a live process holds the receive right.
        case active
        /// Registered: a process published a send right.
        case registered
        public var description: String { rawValue }
    }

    /// The service name.
    public let name: String
    /// Its namespace.
    public let scope: Scope
    /// Where its port is.
    public let state: State
    /// The systemd unit that provides it, if declared with one.
    public let unit: String?
    /// The pid holding it (active or registered), if known.
    public let pid: pid_t?

    /// Makes an entry.
    public init(name: String, scope: Scope, state: State, unit: String?, pid: pid_t?) {
        self.name = name
        self.scope = scope
        self.state = state
        self.unit = unit
        self.pid = pid
    }

    public var description: String {
        "\(name) (\(scope), \(state)\(unit.map { ", unit \($0)" } ?? "")\(pid.map { ", pid \($0)" } ?? ""))"
    }

    /// The listing's wire form: one line per entry, five tab-separated
    /// fields: name, scope (`shared` or the uid), state, unit (`-`), pid (`-`).
    package static func encode(_ entries: [BootstrapEntry]) -> String {
        entries.map { entry in
            let scope = switch entry.scope {
            case .shared: "shared"
            case .user(let uid): String(uid)
            }
            return [entry.name, scope, entry.state.rawValue, entry.unit ?? "-", entry.pid.map { String($0) } ?? "-"]
                .joined(separator: "\t")
        }.joined(separator: "\n")
    }

    /// Parses a listing (hostile input): nil if any line is malformed.
    package static func decode(_ text: String) -> [BootstrapEntry]? {
        var entries: [BootstrapEntry] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, BootstrapName.isValid(fields[0]),
                  let state = State(rawValue: fields[2]) else { return nil }
            let scope: Scope
            if fields[1] == "shared" { scope = .shared } else if let uid = uid_t(fields[1]) { scope = .user(uid) } else { return nil }
            let pid: pid_t?
            if fields[4] == "-" { pid = nil } else if let value = pid_t(fields[4]) { pid = value } else { return nil }
            entries.append(BootstrapEntry(name: fields[0], scope: scope, state: state,
                                          unit: fields[3] == "-" ? nil : fields[3], pid: pid))
        }
        return entries
    }
}
