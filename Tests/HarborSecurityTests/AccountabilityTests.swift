// Harbor — P11, P12: accountable rights (issue 21). Whoever asks pays:
// look-ups kept by the thousand, a name's waiting room, harbord's
// descriptors shared by many uids and a table full of one uid's names each
// cost their own uid, never root's service. Whoever relays is seen: harbord
// never speaks into another process's port for someone, never takes
// another process's port as someone's session, and a message that waited
// for a name reaches its service with its real sender and harbord as relay.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension SecurityTests {
    @Suite struct AccountabilityTests {
        /// P12: uid 65534 looks root's shared name up 5,000 times and keeps
        /// every right for two seconds: they all share one connection, so
        /// neither harbord nor the name's holder (`harbor watch`, an
        /// ordinary service) gains descriptors (a few at most, whatever the
        /// count), and root keeps being served.
        @Test(arguments: ["harbord", "service"])
        func P12_lookUpsKeptByTheThousandCostNoOneADescriptor(_ measured: String) throws {
            let victim = try WatchedServiceVictim(measuring: measured == "harbord" ? .harbord : .service)
            let siege = try besiege(victim, "lookup-flood", ["--count", "5000", "--hold", "2"])
            expectContained(siege)
            #expect(siege.adversary.int("kept") == 5000, "\(siege.summary)")
            #expect(siege.adversary.int("connections") == 1, "look-ups minted connections: \(siege.summary)")
            let peak = try #require(siege.peak)
            #expect(peak.descriptors <= siege.baseline.descriptors + 16,
                    "descriptors grew with the look-ups: \(siege.summary)")
            #expect(victim.strangers().isEmpty, "\(victim.strangers().prefix(3))")
        }

        /// P11: uid 65534 looks up a service of root's and sends harbord
        /// look-ups and listings whose reply right is that service's
        /// connection (as a send-once right, as a copy of the send right,
        /// and under an identity of its own): harbord drops every one and
        /// logs it, and no message from harbord (or anyone but root)
        /// reaches the service.
        @Test func P11_harbordAnswersNoRequestIntoAnotherProcesssPort() throws {
            let victim = try WatchedServiceVictim(measuring: .harbord)
            let siege = try besiege(victim, "deputy-reply", ["--count", "3"])
            expectContained(siege)
            #expect(siege.adversary.int("sent") == 18, "\(siege.summary)")
            #expect(siege.adversary["servedAfter"] == "1", "\(siege.summary)")
            usleep(300_000)
            #expect(victim.strangers().isEmpty, "harbord spoke into the service's port: \(victim.strangers().prefix(3))")
            let drops = victim.harbord.log.split(separator: "\n").filter {
                $0.contains("its reply right leads to another process")
            }
            #expect(!drops.isEmpty, "harbord did not log the drops: \(victim.harbord.log.suffix(800))")
        }

        /// P11: uid 65534 checks names in and registers them naming, as its
        /// session, the send right to root's service it looked up, and then
        /// harbord's own bootstrap right: each is refused (`badRequest`),
        /// and nothing reaches the service.
        @Test func P11_aSessionRightToAnotherProcesssPortIsRefused() throws {
            let victim = try WatchedServiceVictim(measuring: .harbord)
            let siege = try besiege(victim, "deputy-session")
            expectContained(siege)
            let badRequest = String(BootstrapError.Code.badRequest.rawValue)
            #expect(siege.adversary["codes"] == Array(repeating: badRequest, count: 4).joined(separator: ","),
                    "\(siege.summary)")
            #expect(siege.adversary.int("accepted") == 0, "\(siege.summary)")
            #expect(victim.strangers().isEmpty, "\(victim.strangers().prefix(3))")
        }

        /// P12: three uids each send 1,024 messages to a shared name waiting
        /// for root's service: each keeps at most its 128, the rest charged
        /// to it and dropped; root's message sent afterwards still waits,
        /// and at check-in every message shows its real sender's uid with
        /// harbord as its relay.
        @Test func P12_threeUidsFloodingAWaitingNameLeaveRoomForRoot() throws {
            let name = "root.waiting"
            let victim = try HarbordVictim(extraPolicy: "shared \(name) owner=0\n")
            // Root's look-up first: the name's port (and its descriptors) is in the baseline.
            let waiting = try victim.client.lookUp(name)
            let uids: [uid_t] = [65534, 65533, 65532]
            let siege = try besiege(victim, "waiting-flood", ["--name", name, "--count", "1024"], uids: uids)
            expectContained(siege)
            try waiting.send(Message(id: 8, text: "from root"), timeout: .seconds(5))
            let inbox = try victim.client.checkIn(name)
            // What harbord kept arrives relayed by it; what was still on the
            // shared connection when the port moved (a slow machine: the
            // sanitizer runs) arrives straight from its sender. Both are true.
            var counts: [uid_t: Int] = [:]
            var fromRoot = 0, relayedByHarbord = 0, direct = 0, total = 0
            while let message = try? inbox.receive(timeout: .seconds(2)) {
                let trailer = message.trailer
                total += 1
                if trailer.relayedBy == nil {
                    direct += 1
                } else if trailer.relayedBy?.pid == victim.pid {
                    relayedByHarbord += 1
                    counts[trailer.sender.uid, default: 0] += 1
                }
                if message.text == "from root" && trailer.sender.uid == 0 && trailer.sender.pid == getpid() { fromRoot += 1 }
                if message.text.hasPrefix("waiting from uid ") {
                    #expect(message.text.hasPrefix("waiting from uid \(trailer.sender.uid) "),
                            "a message shows a sender it did not come from: \(message.text) from \(trailer.sender)")
                }
            }
            for uid in uids {
                let kept = counts[uid] ?? 0
                #expect(kept > 0 && kept <= BootstrapQuotas.pendingPerNamePerUser, "uid \(uid) kept \(kept): \(counts)")
            }
            _ = victim.refusals()  // reads what harbord logged so far
            let logged = victim.log.split(separator: "\n").filter {
                $0.contains("uid 0") || $0.contains("lost") || $0.contains("shared counter")
            }.suffix(5)
            #expect(fromRoot == 1,
                    "root's message did not wait: \(counts); \(relayedByHarbord) relayed, \(direct) direct; harbord: \(logged)")
            #expect(relayedByHarbord + direct == total, "\(total - relayedByHarbord - direct) of \(total) show a relay other than harbord")
            #expect(Set(counts.keys).isSubset(of: Set(uids + [0])), "\(counts)")
        }

        /// P12: seventeen uids each take all the descriptors harbord lets
        /// them (names checked in on sessions of their own, then
        /// connections) and hold them for three seconds, while root checks
        /// a name in, looks it up, lists and connects afresh every 100 ms:
        /// root is never refused, and everything goes when they leave.
        @Test func P12_seventeenUidsAtTheirShareNeverLockRootOut() throws {
            let victim = try HarbordVictim(newProcessUID: 0, checksIn: true)
            let uids: [uid_t] = [adversaryUID] + (61_001...61_016).map { uid_t($0) }
            let siege = try besiege(victim, "hold-share", ["--hold", "3"], uids: uids)
            expectContained(siege)
            let held = siege.adversaries.map { $0.int("connections") ?? 0 }
            let refusedEach = held.allSatisfy { $0 < 2000 }
            #expect(refusedEach, "a uid was never refused: \(held)")
            let servedAfter = siege.adversaries.filter { $0["servedAfter"] != "1" }
            #expect(servedAfter.isEmpty, "\(siege.summary)")
        }

        /// P12: one uid registers 16,384 names (4,096 under a sanitizer) and then asks for listings
        /// as fast as harbord answers for five seconds, then leaves with all
        /// of them: root's look-ups, listings and sends never fail or time
        /// out meanwhile (harbord serves each uid a slice per pass, one page
        /// for a lister, and removes a leaving process's names in linear
        /// time), and harbord is idle once it leaves.
        @Test
        func P12_aTableOfOneUidsNamesAndAListingFloodLeaveRootServed() throws {
            // A quarter of the table under a sanitizer: its harbord runs 5–15×
            // slower, and the honest client's 5 s deadline is the same.
            let names = Slack.underSanitizer ? 4096 : 16384
            let victim = try HarbordVictim()
            let siege = try besiege(victim, "list-flood", ["--count", "\(names)", "--hold", "5"],
                                    slack: Slack(residentBytes: 32 << 20))
            expectContained(siege, slack: Slack(residentBytes: 32 << 20))
            #expect(siege.adversary.int("registered") == names, "\(siege.summary)")
            #expect((siege.adversary.int("listings") ?? 0) > 0, "\(siege.summary)")
            let left = try victim.client.list().filter { $0.name.hasPrefix("adversary.") }
            #expect(left.isEmpty)
        }
    }
}
