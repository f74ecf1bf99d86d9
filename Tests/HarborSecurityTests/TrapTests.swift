// Harbor — P12: packets shaped to trap a receiver, and the shared slot
// counter every sender maps. A hostile peer hurts only itself: the victim
// stays up, keeps serving the honest client, and counts each refusal.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension SecurityTests {
    @Suite struct TrapTests {
        /// P12: the 56-byte packet of issue 13 (reply flag, continued flag,
        /// one copied region of 1 byte, no descriptors) and its relatives:
        /// the receiver refuses and counts every one, and stays up.
        @Test(arguments: ["harbord", "service"])
        func P12_packetsShapedToTrapTheParserAreRefused(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "crash")
            let kinds = siege.adversary.int("kinds") ?? 10
            expectContained(siege, refusals: kinds)
            #expect(siege.adversary["unansweredAfter"] == "none", "\(siege.summary)")
        }

        /// P12: harbord counts the packets it refuses and says so (a log line
        /// with `refused=N` and a count per reason), so an operator sees an
        /// attack: the trap packets below raise the total by at least their number.
        @Test func P12_harbordCountsItsRefusals() throws {
            let victim = try HarbordVictim()
            let siege = try besiege(victim, "crash")
            #expect(siege.refusalsAfter != nil, "harbord reports no refusal counts: \(victim.log.suffix(600))")
            #expect((siege.refused() ?? 0) >= (siege.adversary.int("kinds") ?? 10), "\(siege.summary)")
        }

        /// P12: 300 counted messages the decoder refuses, each sent on a slot
        /// taken as an honest sender takes one: every refusal gives its slot
        /// back, so the port never looks full to anyone else.
        @Test(arguments: ["harbord", "service"])
        func P12_refusedCountedMessagesGiveTheirSlotsBack(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "wedge", ["--count", "300", "--hold", "2"])
            expectContained(siege, refusals: 300)
        }

        /// P12: the adversary writes the slot counter it maps "full" (or
        /// cannot write it at all): other senders are not blocked.
        @Test(arguments: ["harbord", "service"])
        func P12_aScribbledSlotCounterBlocksNoOtherSender(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "scribble", ["--hold", "3"])
            expectContained(siege)
        }

        /// P12: the adversary overwrites the whole counter page, magic and
        /// all: clients that connect afterwards still get a working
        /// bootstrap right.
        @Test func P12_anOverwrittenSlotCounterLocksNoNewClientOut() throws {
            let victim = try HarbordVictim()
            let siege = try besiege(victim, "scribble-magic", ["--hold", "1"])
            expectContained(siege)
            let newcomer = try BootstrapClient(socketPath: victim.socketPath)
            #expect(try newcomer.list().contains { $0.name == RootNames.checkedIn })
        }

        /// P12: the adversary takes every free slot as a sender would, sends
        /// nothing, holds them for three seconds and leaves: others keep
        /// sending meanwhile and afterwards.
        @Test(arguments: ["harbord", "service"])
        func P12_slotsTakenAndNeverUsedBlockNoOtherSender(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "hoard-slots", ["--hold", "3"])
            expectContained(siege)
        }
    }
}
