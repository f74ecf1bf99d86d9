// Harbor — P12: hoarding connections and names, and not reading replies.
// harbord runs with the soft descriptor limit a systemd service gets by
// default (1,024), so a hoard that costs it descriptors shows.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension SecurityTests {
    @Suite struct HoardingTests {
        /// P12: one uid connects 1,000 times and keeps every bootstrap
        /// right for three seconds: other uids keep being served, and
        /// harbord's descriptors come back when it leaves.
        @Test func P12_hoardedBootstrapRightsLockNoOneOut() throws {
            let victim = try HarbordVictim()
            let siege = try besiege(victim, "hoard-rights", ["--count", "1000", "--hold", "3"])
            expectContained(siege)
        }

        /// P12: one uid checks in 600 names and registers 600 more, keeping
        /// them for three seconds: others keep being served, and the names
        /// and descriptors go when it leaves.
        @Test func P12_hoardedNamesLockNoOneOut() throws {
            let victim = try HarbordVictim()
            let siege = try besiege(victim, "hoard-names", ["--count", "600", "--hold", "3"])
            expectContained(siege)
            let held = (siege.adversary.int("checkedIn") ?? 0) + (siege.adversary.int("registered") ?? 0)
            #expect(held > 0, "the adversary held no names, so nothing was tested: \(siege.adversary)")
            #expect(try victim.client.list().allSatisfy { !$0.name.hasPrefix("adversary.") })
        }

        /// P12: requests whose reply rights share one socket the adversary
        /// never reads: the victim's replies cannot block it, and it keeps
        /// serving others while the socket stays full.
        @Test(arguments: ["harbord", "service"])
        func P12_repliesNobodyReadsBlockNoOne(_ kind: String) throws {
            let victim: Victim = kind == "harbord" ? try HarbordVictim() : try ServiceVictim()
            let siege = try besiege(victim, "stop-reading", ["--hold", "3"])
            expectContained(siege)
        }
    }
}
