// Harbor — a loop's print-out: common modes, and each mode's items.
import HarborPorts
import HarborSystem

extension Loop: CustomStringConvertible {
    /// Lists the loop's thread, whether it sleeps, its current mode, its
    /// common modes and common items, and for each mode its sources, port,
    /// descriptor, process and signal sources, timers (with next fire dates) and observers — what
    /// `NSLog(@"%@", runLoop)` shows on Darwin, in a shorter form.
    /// **Cost:** takes the loop's lock while it copies the lists.
    public var description: String {
        state.withLock { state in
            var lines: [String] = []
            let current = state.modeStack.last.map(\.name) ?? "none"
            lines.append("Loop(thread \(threadID)\(isMain ? ", main" : ""))"
                + " { waiting: \(state.isWaiting), stopped: \(state.stopRequested), current mode: \(current),")
            lines.append("  common modes: [\(state.commonModes.map(\.name).joined(separator: ", "))],")
            lines.append("  common mode items: \(state.commonItems.count + state.commonTimers.count),")
            lines.append("  pending blocks: \(state.blocks.count),")
            lines.append("  modes: {")
            for name in state.modes.keys.sorted(by: { $0.name < $1.name }) {
                guard let mode = state.modes[name] else { continue }
                lines.append("    \(name.name)\(mode.isCommon ? " (common)" : "") {")
                lines.append("      sources0: [\(mode.sources.map(\.description).joined(separator: ", "))]")
                lines.append("      sources1: [\(mode.waitSources.map(\.description).joined(separator: ", "))]")
                let timers = mode.timers.all.sorted { $0.fireDate < $1.fireDate }
                lines.append("      timers: [\(timers.map(\.description).joined(separator: ", "))]")
                lines.append("      observers: [\(mode.observers.map(\.description).joined(separator: ", "))]")
                lines.append("    }")
            }
            lines.append("  }")
            lines.append("}")
            return lines.joined(separator: "\n")
        }
    }
}
