// Examples — the clock's answer: a wall-clock time and who served it.
import Glibc

/// A wall-clock time (`CLOCK_REALTIME`) and the process that read it.
public struct ClockTime: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Seconds since 1970-01-01 00:00 UTC.
    public var seconds: Int64
    /// Nanoseconds past `seconds`.
    public var nanoseconds: Int32
    /// The process id of the service that read the clock, as it knows itself.
    public var servedBy: Int32

    /// A time and the process that read it.
    public init(seconds: Int64, nanoseconds: Int32, servedBy: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
        self.servedBy = servedBy
    }

    /// The time now, read by this process.
    public static func current() -> ClockTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return ClockTime(seconds: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec), servedBy: getpid())
    }

    /// `seconds.milliseconds`, as `date +%s.%3N` prints it.
    public var description: String {
        let milliseconds = Int(nanoseconds / 1_000_000)
        return "\(seconds)." + String(repeating: "0", count: milliseconds < 10 ? 2 : milliseconds < 100 ? 1 : 0) + "\(milliseconds)"
    }
}
