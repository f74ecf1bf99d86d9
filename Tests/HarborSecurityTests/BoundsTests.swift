// Harbor — P12: what a peer can make a receiver hold is bounded and given
// back when the peer leaves: descriptors in wait packets, unfinished
// fragmented messages, regions, registry entries, connections, names, and
// replies nobody reads.
import Glibc
import Harbor
import HarborTestSupport
import Testing

extension SecurityTests {
    @Suite struct BoundsTests {
        /// P12: 5,000 wait packets re-sending one eventfd: the victim holds a
        /// bounded number of descriptors meanwhile and none once the
        /// adversary is gone.
        @Test(arguments: ["harbord", "service"])
        func P12_waitPacketsHoldBoundedDescriptors(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "wait-flood", ["--count", "5000", "--hold", "2"])
            expectContained(siege)
            #expect((siege.peak?.descriptors ?? .max) <= siege.baseline.descriptors + 256, "\(siege.summary)")
        }

        /// P12: three connections each with an unfinished fragmented message
        /// declaring 256 MiB (all but 1 MiB sent), held for three seconds:
        /// the victim's memory stays bounded meanwhile and comes back after.
        @Test(arguments: ["harbord", "service"])
        func P12_unfinishedFragmentedMessagesHoldBoundedMemory(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let slack = Slack(descriptors: 2, residentBytes: 16 << 20, within: .seconds(15))
            let siege = try besiege(victim, "fragments", ["--count", "3", "--hold", "3"], slack: slack)
            expectContained(siege, slack: slack)
            #expect((siege.peak?.residentBytes ?? .max) <= siege.baseline.residentBytes + (300 << 20), "\(siege.summary)")
        }

        /// P12: the adversary sends half of a 256 MiB fragmented message and
        /// SIGKILLs itself: the partial message is released.
        @Test(arguments: ["harbord", "service"])
        func P12_aSenderThatDiesMidMessageLeavesNothingBehind(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let slack = Slack(descriptors: 2, residentBytes: 16 << 20, within: .seconds(15))
            let siege = try besiege(victim, "die-mid-message", slack: slack)
            expectContained(siege, slack: slack, adversaryFinishes: false)
            #expect(siege.adversary.waitStatus.map { $0 & 0x7f } == SIGKILL, "\(siege.summary)")
            #expect(siege.adversary["killedItself"] == "1", "\(siege.summary)")
        }

        /// P12: three receive rights whose moved queues each hold 256 MiB
        /// of message bodies (holes of a memory file: free to the sender,
        /// twice what one uid may have a receiver queue) are refused from
        /// their parse, before a body is copied: the victim's memory stays
        /// flat, and it is served throughout.
        @Test(arguments: ["harbord", "service"])
        func P12_movedQueuesOfBodiesCostTheVictimNothing(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "queue-bomb", ["--count", "3", "--hold", "1"])
            expectContained(siege, refusals: 3, reason: "over-a-peer-limit")
            #expect(siege.adversary["sent"] == "3", "\(siege.summary)")
            // Copied, the bodies took harbord to 418 MiB; parsed and refused,
            // its peak is the headers' pages of the mapped packets.
            let peak = Slack(residentBytes: 64 << 20).allowedResidentBytes
            #expect((siege.peak?.residentBytes ?? .max) <= siege.baseline.residentBytes + peak, "\(siege.summary)")
        }

        /// P12: messages with 17 regions (one too many) are refused and
        /// counted; messages with 16 sparse regions of 4 GiB each cost the
        /// victim nothing once dropped.
        @Test(arguments: ["harbord", "service"])
        func P12_tooManyAndHugeRegionsAreContained(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "regions", ["--count", "20"])
            expectContained(siege, refusals: 20)
        }

        /// P12: 300,000 fresh identities on send-once rights (or as many as
        /// the victim takes before cutting the adversary off): the victim's
        /// registry of port identities does not keep them.
        @Test(arguments: ["harbord", "service"])
        func P12_freshIdentitiesDoNotGrowTheVictim(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let slack = Slack(descriptors: 2, residentBytes: 4 << 20, within: .seconds(10))
            let siege = try besiege(victim, "identities", ["--count", "300000"], slack: slack)
            expectContained(siege, slack: slack)
            // harbord may cut the adversary off on the way (a uid over its share).
            #expect((siege.adversary.int("identities") ?? 0) >= 64, "\(siege.summary)")
        }
    }
}
