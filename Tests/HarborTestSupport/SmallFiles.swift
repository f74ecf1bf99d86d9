// Harbor — test support: reading a small file whole (/proc entries, a child's report).
import Glibc

/// The whole of a small file as text; nil if it cannot be opened or read.
/// An empty file is "", not nil.
public func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var text: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { break }
        text += chunk[0..<count]
    }
    return String(decoding: text, as: UTF8.self)
}

/// Writes `text` to `path` (created with `mode`, or truncated); whether all of it was written.
@discardableResult
public func writeSmallFile(_ path: String, _ text: String, mode: mode_t = 0o644) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return false }
        written += count
    }
    return true
}
