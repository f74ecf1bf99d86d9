// Harbor — request files: how a harbord without root asks for a declared name's unit to be started.
import HarborPorts
import HarborSystem

/// The directory of activation requests (default `/run/harbor/activate`):
/// one empty file per unit to start, named after the unit.
///
/// `harbord` runs as an unprivileged user, which may not start units
/// (`systemctl start` would go through D-Bus and polkit). It writes
/// `DIRECTORY/UNIT` instead; `harbor-activate.path` (`DirectoryNotEmpty=`)
/// starts `harbor-activate.service`, which runs `harbord --activate-pending`
/// as root: it starts each requested unit the policy file declares, refuses
/// any other, and removes every request (Docs/Systemd.md, "Activation").
/// Only the file's name carries the request; its content is never read.
///
/// Under systemd the directory is harbord's `RuntimeDirectory=`, owned by
/// its dynamic user, mode 0700.
public struct ActivationRequests: Sendable, Hashable {
    /// Where the shipped units put it.
    public static let defaultDirectory = "/run/harbor/activate"

    /// The directory holding the requests.
    public let directory: String

    public init(directory: String = ActivationRequests.defaultDirectory) {
        self.directory = directory
    }

    /// Whether this process may write requests (the directory exists and
    /// its real ids may make files in it).
    public var isWritable: Bool { FileSystem.isWritableDirectory(directory) }

    /// Asks for `unit` to be started: creates `DIRECTORY/UNIT` (mode 0600;
    /// one already waiting is kept).
    /// - Throws: the `open` failure; EINVAL for a name that is no file name.
    public func request(_ unit: String) throws(SystemError) {
        guard Self.isFileName(unit) else { throw SystemError(errno: 22, call: "open") } // EINVAL
        try FileSystem.touch(directory + "/" + unit, mode: 0o600)
    }

    /// The names of the requests waiting (every entry, hidden ones too), in
    /// name order; nil if the directory cannot be read (missing: none).
    public func pending() -> [String]? {
        if !FileSystem.exists(directory) { return [] }
        return FileSystem.entries(of: directory, includingHidden: true)?.sorted()
    }

    /// Removes the request `name` (a file, a link or an empty directory
    /// someone put there); whether it is gone.
    public func remove(_ name: String) -> Bool {
        guard Self.isFileName(name) else { return false }
        return FileSystem.removeEntry(directory + "/" + name)
    }

    /// A single path component: not empty, no `/`, not `.` or `..`.
    static func isFileName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && name != "." && name != ".." && !name.contains("\0")
    }
}
