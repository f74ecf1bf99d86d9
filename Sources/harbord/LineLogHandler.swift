// Harbor — harbord's log lines: one per event on stderr, with journald's priority prefix or a time stamp.
import Glibc
import HarborSystemd
import Logging

/// A swift-log handler writing one line per event to stderr.
///
/// Under the journal each event is an entry of its own sent to journald
/// (`Journal.send`): the message, its priority, `SYSLOG_IDENTIFIER` the
/// label, and each metadata key as a field `HARBOR_KEY` (`HARBOR_NAME`,
/// `HARBOR_SCOPE`, `HARBOR_UID`, `HARBOR_PID` on every line about a name),
/// so `journalctl HARBOR_NAME=com.example.echo` finds a name's lines; if
/// journald does not take it, a line on stderr starting with `<N>` (the
/// syslog priority) instead. On a terminal: a line with a UTC time stamp
/// and the level in words, the metadata following the message as
/// `key=value`. Each line is one `write(2)`, so lines from different
/// threads never interleave.
struct LineLogHandler: LogHandler {
    enum Style: Sendable {
        case journal
        case terminal
    }

    let label: String
    let style: Style
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, style: Style) {
        self.label = label
        self.style = style
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let sorted = merged.sorted { $0.key < $1.key }
        if style == .journal {
            let fields = sorted.map { ("HARBOR_" + $0.key.uppercased(), "\($0.value)") }
            if Journal.send(message: "\(event.message)", priority: Self.priority(event.level), identifier: label,
                            fields: fields) {
                return
            }
        }
        let fields = sorted.map { " \($0.key)=\($0.value)" }.joined()
        let text = "\(event.message)\(fields)".replacingOccurrences(of: "\n", with: " ")
        let line: String
        switch style {
        case .journal:
            line = "<\(Self.priority(event.level))>\(text)\n"
        case .terminal:
            line = "\(Self.timestamp()) \(label)[\(getpid())] \(event.level): \(text)\n"
        }
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// syslog priorities: debug 7, info 6, notice 5, warning 4, err 3, crit 2.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    private static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var parts = tm()
        var seconds = spec.tv_sec
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(spec.tv_nsec / 1_000_000)
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
