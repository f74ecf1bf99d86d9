// harbor-adversary — P12: asking for a name over and over and keeping every
// answer. A look-up that minted a connection would cost harbord and the
// name's holder a descriptor each (Docs/Bootstrap.md, "Look-ups").
import Glibc

enum LookUpFlood {
    /// `lookup-flood` (harbord): `--count` (5,000) look-ups of `--name`,
    /// every right kept; reports how many it got and how many distinct
    /// connections they share (their sockets' inodes); holds on.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .harbord else { Report.fail("lookup-flood needs harbord") }
        report.set("descriptorLimit", RawIO.raiseDescriptorLimit())
        var kept: [Target] = []
        var refused = 0
        var connections: Set<UInt64> = []
        for _ in 0..<(options.count ?? 5000) {
            if let right = target.lookUp(options.name) {
                connections.insert(RawIO.inode(right.socket))
                kept.append(right)
            } else {
                refused += 1
                if refused > 50 { break }
            }
        }
        report.set("kept", kept.count)
        report.set("refused", refused)
        report.set("connections", connections.count)
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        withExtendedLifetime(kept) {}
    }
}
