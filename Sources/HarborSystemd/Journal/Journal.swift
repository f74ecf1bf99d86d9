// Harbor — entries for the systemd journal with fields of their own (sd_journal_sendv).
import CSystemd
import Glibc  // types only: iovec

/// Writes log entries straight to the systemd journal, each with fields of
/// its own beside the message (`journalctl HARBOR_NAME=com.example.echo`,
/// `-o verbose`, `-o json`), which a line on stderr cannot carry.
///
/// **Cost:** one `sendmsg` to `/run/systemd/journal/socket` per entry.
/// **Thread safety:** any thread.
public enum Journal {
    /// Sends one entry: `MESSAGE`, `PRIORITY` (a syslog priority, 0–7),
    /// `SYSLOG_IDENTIFIER`, then `fields` in order. A field whose name is
    /// not a journal field name (A–Z, 0–9 and `_`, starting with a letter,
    /// at most 64 characters) is left out; values may hold any bytes.
    /// - Returns: false if the journal did not take it (no journald here).
    @discardableResult
    public static func send(message: String, priority: Int, identifier: String, fields: [(String, String)] = []) -> Bool {
        var entries = ["MESSAGE=\(message)", "PRIORITY=\(min(max(priority, 0), 7))", "SYSLOG_IDENTIFIER=\(identifier)"]
        for (name, value) in fields where isFieldName(name) { entries.append("\(name)=\(value)") }
        var buffer: [UInt8] = []
        var spans: [(offset: Int, count: Int)] = []
        for entry in entries {
            let bytes = Array(entry.utf8)
            spans.append((buffer.count, bytes.count))
            buffer += bytes
        }
        let sent = buffer.withUnsafeMutableBytes { raw -> CInt in
            var vectors = spans.map { iovec(iov_base: raw.baseAddress! + $0.offset, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, CInt(vectors.count))
        }
        return sent >= 0
    }

    /// Whether `name` is a field name a program may set.
    public static func isFieldName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), let first = bytes.first, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) else {
            return false
        }
        return bytes.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }
}
