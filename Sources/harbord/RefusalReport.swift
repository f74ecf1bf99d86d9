// Harbor — harbord tells its operator about hostile input: the packets its
// ports refused, by reason (WireRejections), logged when the counts change.
import HarborPorts
import HarborRunLoop
import Logging
import Synchronization
import HarborSystem
import HarborTransport

/// Logs `refused=N` and one `reason=N` word per reason seen, at most once a
/// second and only when a count changed, so an attack shows in the journal
/// without letting the attacker flood it (P12).
enum RefusalReport {
    /// The log key of a reason: its description with dashes for spaces.
    static func key(_ reason: WireRejectionReason) -> String {
        String(reason.description.map { $0 == " " ? "-" : $0 })
    }

    /// One line: the total, then every reason with a count.
    static func line() -> String {
        var words = ["refused=\(WireRejections.total)"]
        for reason in WireRejectionReason.allCases {
            let count = WireRejections.count(reason)
            if count > 0 { words.append("\(key(reason))=\(count)") }
        }
        return words.joined(separator: " ")
    }

    /// A timer on `loop` that checks the counts once a second (with a
    /// generous tolerance: it must not keep an idle daemon awake).
    static func start(on loop: Loop, logger: Logger) -> LoopTimer {
        let logged = HarborLock(0)
        let timer = LoopTimer(after: .seconds(1), repeating: .seconds(1), tolerance: .milliseconds(500),
                              label: "refusal-report") { _ in
            let total = WireRejections.total
            let changed = logged.withLock { last in
                defer { last = total }
                return last != total
            }
            if changed { logger.warning("hostile input: \(line())") }
        }
        loop.add(timer, forMode: .common)
        return timer
    }
}
