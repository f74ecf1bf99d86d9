// Harbor — helpers for the systemd tests: fresh threads, a NOTIFY_SOCKET harness, child processes.
import CHarborLinux
import Glibc
import HarborPorts
import HarborTestSupport
import Testing
import HarborSystem

/// Every systemd suite nests in here, so they run one at a time and the
/// process-wide descriptor count means something in each of them.
@Suite(.serialized, .deadline) struct SystemdTests {}

/// An ordered log of (milliseconds since start, event), written from any thread.
final class TimedLog: Sendable {
    private let start = ContinuousClock.now
    private let entries = HarborLock<[Entry]>([])
    struct Entry: Sendable {
        var ms: Double
        var event: String
    }
    func record(_ event: String) {
        let ms = Double((ContinuousClock.now - start) / .microseconds(1)) / 1000
        entries.withLock { $0.append(Entry(ms: ms, event: event)) }
    }
    var all: [Entry] { entries.withLock { $0 } }
    func times(of event: String) -> [Double] { all.filter { $0.event == event }.map(\.ms) }
    func count(of event: String) -> Int { all.filter { $0.event == event }.count }
    var events: [String] { all.map(\.event) }
}

/// The probe executable, built beside the test bundle.
func probePath() -> String { builtExecutable("harbor-notify-probe") }

/// A mutable value shared by closures that all run on one thread.
final class Cell<Value>: @unchecked Sendable {
    // @unchecked: every test uses a Cell on one thread only (the loop's).
    var value: Value
    init(_ value: Value) { self.value = value }
}
