// Harbor — P12 at the name server's descriptor table: the share rule alone, with many uids each at its cap.
import HarborBootstrap
import Testing

extension BootstrapTests {
    @Suite struct DescriptorSharesTests {
        /// A table of what each uid holds, taking through the rule one descriptor at a time.
        struct Table {
            let shares: DescriptorShares
            var held: [UInt32: Int] = [:]

            func privileged(_ uid: UInt32) -> Bool { uid == 0 || uid == Self.server }
            static let server: UInt32 = 990

            /// Takes one descriptor at a time for `uid` until refused or `limit` is reached; how many it got.
            mutating func take(_ uid: UInt32, upTo limit: Int = .max) -> Int {
                var taken = 0
                while taken < limit {
                    let total = held.values.reduce(0, +)
                    let unprivileged = held.filter { !privileged($0.key) }.values.reduce(0, +)
                    guard shares.allows(held: held[uid] ?? 0, more: 1, privileged: privileged(uid),
                                        unprivilegedTotal: unprivileged, total: total) else { break }
                    held[uid, default: 0] += 1
                    taken += 1
                }
                return taken
            }
        }

        /// P12: 17 uids, each taking all the rule lets it (the incident: 17
        /// uids within quota held 18,678 connections and root was refused):
        /// the first 16 get exactly one share each, the 17th nothing; root
        /// and the server's own uid still find the two reserved shares.
        @Test func P12_seventeenUidsAtTheirCapStillLeaveRootItsShare() {
            for available in [61_420, 65_000, 1_000, 270, 18] {
                var table = Table(shares: DescriptorShares(available: available))
                let share = table.shares.share
                let got = (1000..<1017).map { table.take(UInt32($0)) }
                #expect(got.prefix(16).allSatisfy { $0 == share }, "available \(available): \(got), share \(share)")
                #expect(got.last == 0, "available \(available): a 17th uid got \(got.last ?? -1) over 16 full shares")
                #expect(table.take(Table.server, upTo: share) == share, "available \(available): the server's uid refused within its share")
                #expect(table.take(0) >= share, "available \(available): root refused within the reserve")
                #expect(table.held.values.reduce(0, +) <= available)
            }
        }

        /// P12: whatever order uids come in, an unprivileged uid is refused
        /// only over its own share, or when 15 other unprivileged uids hold
        /// their full share; root is never refused while anything is free.
        @Test func P12_aUidIsRefusedOnlyOverItsShareOrWhenFifteenOthersHoldTheirs() {
            let shares = DescriptorShares(available: 61_420)
            var table = Table(shares: shares)
            #expect(table.take(0, upTo: shares.share / 2) == shares.share / 2)
            for uid in 1000..<1015 { #expect(table.take(UInt32(uid)) == shares.share) }
            // 15 others at their share: a 16th still gets its whole share...
            #expect(table.take(2000) == shares.share)
            // ...and a 17th nothing, while root takes what is free, the reserve included.
            #expect(table.take(2001) == 0)
            #expect(table.take(0) == shares.available - 16 * shares.share - shares.share / 2)
            #expect(table.held.values.reduce(0, +) == shares.available)

            // 14 full, one of which lets 5 go: two more get a whole share, a third the 5 left.
            var fewer = Table(shares: shares)
            for uid in 1000..<1014 { _ = fewer.take(UInt32(uid)) }
            fewer.held[1000] = shares.share - 5  // one of them lets some go
            #expect(fewer.take(3000) == shares.share)
            #expect(fewer.take(3001) == shares.share)
            #expect(fewer.take(3002) == 5, "the last uid got other than what the pool has left")
        }
    }
}
