// Harbor — P11: rights are capabilities. An adversary running as another
// uid forges receive, send and send-once rights from identities it has seen
// or guessed, and queues requests that claim to come from uid 0; nothing it
// writes in a packet gives it authority, and every forgery is refused and
// counted while an honest client keeps working.
import Glibc
import Harbor
import HarborBootstrap
import HarborPeerCommands
import HarborTestSupport
import Testing

/// Every security suite nests in here, so they run one at a time (they
/// measure other processes and share the machine's two CPUs). The
/// adversary runs as uid 65534 through `setpriv`, which needs root.
@Suite(.serialized, .deadline(.seconds(600)), .requiresRoot("setpriv to another uid"))
struct SecurityTests {}

extension SecurityTests {
    @Suite struct ForgeryTests {
        /// P11: a receive right claiming the bootstrap port's identity (from
        /// the welcome packet), carrying the real slot counter and queued
        /// requests "from uid 0" (a listing, a look-up of root's name), and
        /// then guessed neighbours of that identity: harbord answers none of
        /// them as uid 0, keeps its bootstrap port, and counts the forgeries.
        @Test func P11_aForgedReceiveRightNamingTheBootstrapPortIsRefused() throws {
            let victim = try HarbordVictim()
            let siege = try besiege(victim, "forge-receive", ["--name", RootNames.checkedIn])
            expectContained(siege, refusals: 1)
            #expect(siege.adversary.int("answeredAsRoot") == 0, "impersonated uid 0: \(siege.summary)")
            #expect(siege.adversary["servedAfter"] == "1", "\(siege.summary)")
            #expect(victim.drainStrangers() == 0)
        }

        /// P11: a receive right claiming the service's own port, with queued
        /// requests "from uid 0", and guessed neighbours: the service never
        /// sees uid 0, its port keeps its queue limit and its senders, and it
        /// counts the forgery.
        @Test func P11_aForgedReceiveRightNamingAServicePortIsRefused() throws {
            let victim = try ServiceVictim()
            let before = victim.stats()
            let siege = try besiege(victim, "forge-receive")
            expectContained(siege, refusals: 1, reason: "forged-right")
            #expect(siege.adversary.int("answeredAsRoot") == 0, "impersonated uid 0: \(siege.summary)")
            let after = victim.stats()
            #expect(after?["limit"] != nil && after?["limit"] == before?["limit"], "\(before ?? [:]) → \(after ?? [:])")
            #expect(after?["senders"] == before?["senders"], "\(before ?? [:]) → \(after ?? [:])")
            #expect(after?["dead"] == "false")
        }

        /// P11: send rights claiming the bootstrap port and its neighbours
        /// (numbers are sequential: among them the port of a name declared
        /// for root), each on a socket of the adversary's, registered as
        /// names and looked up again: every look-up leads to the adversary's
        /// own socket, never to a port harbord or root holds (a claimed
        /// identity makes a port of its own, unless refused); nothing
        /// reaches root's services or root's declared name.
        @Test func P11_aForgedSendRightStealsNothingFromHarbord() throws {
            let victim = try HarbordVictim()
            let siege = try besiege(victim, "forge-send", ["--guesses", "64"])
            expectContained(siege)
            #expect(siege.adversary.int("stolen") == 0, "stole a right: \(siege.summary)")
            #expect(siege.adversary.int("forgedOwnHonoured") == 0, "\(siege.summary)")
            #expect(siege.adversary.int("lost") == 0, "a look-up went to the port a claim named: \(siege.summary)")
            #expect(victim.drainStrangers() == 0, "the adversary reached root's services")
            let declared = try victim.client.checkIn(RootNames.declared)
            #expect(declared.status.queuedMessages == 0, "the adversary reached root's declared name")
        }

        /// P11: send rights claiming the service's port and its neighbours
        /// (among them a port the service keeps to itself), which the service
        /// is asked to forward to the adversary: it never hands out a right
        /// to a port of its own that way.
        @Test func P11_aForgedSendRightStealsNothingFromAService() throws {
            let victim = try ServiceVictim()
            var private_ = try victim.request(Message(id: PeerCommand.keepNew))
            let keptPort = try private_.takeSendOnceRight(at: 0)
            let siege = try besiege(victim, "forge-send")
            expectContained(siege)
            #expect(siege.adversary.int("stolen") == 0, "stole a right: \(siege.summary)")
            #expect(siege.adversary.int("forgedOwnHonoured") == 0, "\(siege.summary)")
            _ = consume keptPort
        }

        /// P11: a service takes a vouch only from the name server it trusts:
        /// forged send rights claiming its port, vouching for its real slot
        /// counter's file, forwarded back to the adversary, are still the
        /// adversary's own sockets.
        @Test func P11_aFalseVouchStealsNothingFromAService() throws {
            let victim = try ServiceVictim()
            let siege = try besiege(victim, "forge-send", ["--guesses", "8", "--vouch", "true"])
            expectContained(siege)
            #expect(siege.adversary.int("vouched") == siege.adversary.int("claims"), "\(siege.summary)")
            #expect((siege.adversary.int("claims") ?? 0) > 1, "\(siege.summary)")
            #expect(siege.adversary.int("stolen") == 0, "stole a right: \(siege.summary)")
            #expect(siege.adversary.int("forgedOwnHonoured") == 0, "\(siege.summary)")
        }

        /// P11: reply rights (send-once) claiming the victim port's identity
        /// and its neighbours, on sockets of the adversary's: a claim names
        /// nothing but the socket it came with, so every answer goes back to
        /// the adversary (or nowhere), never to the port it named.
        @Test(arguments: ["harbord", "service"])
        func P11_aForgedSendOnceRightReachesOnlyItsOwnSocket(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "forge-send-once")
            expectContained(siege)
            #expect(siege.adversary.int("silent") == 0, "an answer went elsewhere: \(siege.summary)")
            #expect(siege.adversary["own"] == "answered" || siege.adversary["own"] == "dropped", "\(siege.summary)")
            if let harbord = victim as? HarbordVictim { #expect(harbord.drainStrangers() == 0) }
        }

        /// P11: a receive right the adversary really made and moves to the
        /// service, its queue holding messages "from pid 1, uid 0": the
        /// service sees the adversary as their sender, never the claim.
        @Test func P11_aRelayedClaimNeverBecomesTheSender() throws {
            let victim = try ServiceVictim()
            let siege = try besiege(victim, "relay-claim")
            expectContained(siege)
            #expect(siege.adversary.int("drained") == 2, "\(siege.summary)")
            #expect(siege.adversary.int("shownAsClaimed") == 0, "a claim became the sender: \(siege.summary)")
            #expect(siege.adversary.int("shownAsRelay") == 2, "\(siege.summary)")
        }
    }
}
