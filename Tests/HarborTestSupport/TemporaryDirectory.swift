// Harbor — test support: a fresh directory under /tmp, removed with its files.
import Glibc

/// A directory under /tmp, made fresh (`mkdtemp`) and world-searchable
/// (mode 0755), so a child running as `nobody` reaches a socket or an
/// executable copied into it. Its files, then the directory, are removed
/// when it is released (one level: the tests make no subdirectories).
public final class TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Makes `/tmp/<prefix>-XXXXXX`.
    public init(prefix: String = "harbor-test") {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        chmod(path, 0o755)
    }

    deinit {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
                }
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(directory)
        }
        rmdir(path)
    }

    /// Writes `text` to the file `name` here (mode `mode`, whatever the
    /// umask); its path.
    @discardableResult
    public func write(_ name: String, _ text: String, mode: mode_t = 0o644) -> String {
        let file = path + "/" + name
        writeSmallFile(file, text, mode: mode)
        chmod(file, mode)
        return file
    }

    /// An empty file anyone may write (a report a child of another uid fills); its path.
    public func writableFile(_ name: String) -> String {
        write(name, "", mode: 0o666)
    }

    /// The text of the file `name` here; nil if there is none.
    public func read(_ name: String) -> String? {
        readSmallFile(path + "/" + name)
    }

    /// Copies `source` here as `name` with `mode` (an executable, for a
    /// child of another uid who may not reach the build directory); the
    /// copy's path.
    ///
    /// `cp` writes the copy in a child of its own, never this process: a
    /// file this process held open for writing would be inherited, for the
    /// instant before its exec, by any child another thread spawns meanwhile,
    /// and running the copy in that instant fails with ETXTBSY ("Text file
    /// busy"), as it once did in a CI run.
    public func copy(_ source: String, as name: String, mode: mode_t = 0o755) -> String {
        let copy = path + "/" + name
        let cp = Child(["/bin/cp", source, copy], environment: [], captureOutput: false)
        cp.waitForExit()
        chmod(copy, mode)
        return copy
    }
}
