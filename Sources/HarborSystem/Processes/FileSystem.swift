// Harbor — the few file-system calls the name server and the run loop make.
import CHarborLinux
import Glibc

/// Paths: directories, sockets on disk, small files and `/proc` listings.
package enum FileSystem {
    /// Whether anything exists at `path` (following links). C: `access(F_OK)`.
    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// What is at `path` itself (not following a link): nil if nothing,
    /// else whether it is a socket. C: `lstat`.
    package static func isSocket(_ path: String) -> Bool? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT == S_IFSOCK
    }

    /// Makes directory `path` with `mode`; one that exists already is not
    /// an error. C: `mkdir`.
    package static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        if mkdir(path, mode) != 0 {
            let code = charbor_errno()
            if code != EEXIST { throw SystemError(errno: code, call: "mkdir") }
        }
    }

    /// Removes the name `path`; a missing one is not an error. C: `unlink`.
    package static func remove(_ path: String) { _ = unlink(path) }

    /// Removes the name `path` (a file, a link itself, or an empty
    /// directory); whether nothing is left there. C: `unlink`, `rmdir`.
    package static func removeEntry(_ path: String) -> Bool {
        if unlink(path) == 0 || charbor_errno() == ENOENT { return true }
        return rmdir(path) == 0 || charbor_errno() == ENOENT
    }

    /// Whether this process may make and remove names in directory `path`
    /// (by its real ids). C: `access(W_OK | X_OK)`.
    package static func isWritableDirectory(_ path: String) -> Bool { access(path, W_OK | X_OK) == 0 }

    /// Creates an empty file at `path` with `mode` (an existing file is
    /// kept as it is; a link there is refused: ELOOP). C: `open(O_CREAT | O_NOFOLLOW)`, `close`.
    package static func touch(_ path: String, mode: mode_t = 0o600) throws(SystemError) {
        let fd = try systemCall("open") { open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode) }
        _ = close(fd)
    }

    /// Sets the permission bits of `path`. C: `chmod`.
    package static func setMode(_ path: String, _ mode: mode_t) throws(SystemError) {
        _ = try systemCall("chmod") { chmod(path, mode) }
    }

    /// The content of the file at `path`, read in 64 KiB chunks until its
    /// end or until more than `limit` bytes came (so a caller can refuse a
    /// file too large without reading all of it). C: `open`, `read`, `close`.
    package static func contents(of path: String, readingAtMost limit: Int = .max) throws(SystemError) -> [UInt8] {
        let fd = try systemCall("open") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { _ = close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= limit {
            let count = try systemCall("read") { Glibc.read(fd, &chunk, chunk.count) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// The names in directory `path`, without `.`, `..` and (unless
    /// `includingHidden`) other names starting with a dot; nil if it cannot
    /// be read. C: `opendir`, `readdir`, `closedir`.
    package static func entries(of path: String, includingHidden: Bool = false) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            if includingHidden || !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    /// The first line of the text file at `path` that starts with `prefix`
    /// (lines up to 255 bytes); nil if none or unreadable.
    /// C: `fopen`, `fgets`, `fclose` (a `/proc` file has no size to read by).
    package static func firstLine(startingWith prefix: String, in path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, CInt(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix(prefix) { return text }
        }
        return nil
    }

    /// Raises the soft limit on open descriptors to the hard limit and
    /// returns the soft limit then in force; nil if it cannot be read.
    /// C: `getrlimit`, `setrlimit(RLIMIT_NOFILE)`.
    package static func raiseDescriptorLimit() -> Int? {
        var limits = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limits) == 0 else { return nil }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(resource, &raised) == 0 { limits = raised }
        }
        return Int(clamping: limits.rlim_cur)
    }
}
