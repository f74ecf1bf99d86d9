// Harbor — P12 at the name server: what one uid can make harbord hold is bounded, refused with a typed error,
// harmless to other uids, and released when its processes leave.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite(.deadline(.seconds(60))) struct QuotaTests {
        /// P12: `nobody` checks in one name more than its quota: the last is
        /// refused with overQuota (`harbor` exits 6); root's names are its
        /// own quota's business; when nobody's process exits its names are
        /// released and it may check them in again.
        @Test(.requiresRoot("to run a child as nobody")) func P12_namesOverAUidsQuotaAreRefusedAndReleasedWhenItsProcessLeaves() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(extraArguments: ["--max-names-per-uid", "5"])
                #expect(harbord.waitUntilReady())
                let greedy = harbord.harbor(["hold"] + (1...6).map { "n.\($0)" }, asNobody: true)
                #expect(greedy.exitCode() == 6, "the sixth name should be over quota: \(greedy.stderrSoFar)")
                #expect(greedy.waitForStderr("n.6: uid 65534 has 5 names, its limit"), "\(greedy.stderrSoFar)")

                let client = try harbord.client()
                let mine = try (1...5).map { HeldName(try client.checkIn("r.\($0)")) }
                #expect(code(of: { _ = try client.checkIn("r.6") }) == .overQuota)

                // nobody's names went with its process: five fit again.
                #expect(eventually { harbord.harbor(["hold"] + (1...5).map { "n.\($0)" } + ["--seconds", "0.1"], asNobody: true).exitCode() == 0 })
                #expect(mine.count == 5)
                #expect(harbord.stop() == 0)
            }
        }

        /// P12: a uid's connections are bounded: with three of root's
        /// processes connected, a fourth is refused with overQuota on
        /// connecting, nobody still connects, and the connections come back
        /// when those processes leave. (Connections, not clients: clients in
        /// one process share one connection, as every right to one port in
        /// one process does.)
        @Test(.requiresRoot("to run a child as nobody")) func P12_connectionsOverAUidsQuotaAreRefusedOthersStillConnect() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(extraArguments: ["--max-clients-per-uid", "3"])
                #expect(harbord.waitUntilReady())
                let holders = (1...3).map { harbord.harbor(["hold", "c.\($0)", "--seconds", "3"]) }
                for holder in holders { #expect(holder.waitForStdout("holding")) }
                #expect(harbord.harbor(["list"]).exitCode() == 6, "a fourth connection of root's was let in")
                #expect(harbord.harbor(["list"], asNobody: true).exitCode() == 0, "nobody was locked out by root's connections")
                for holder in holders { #expect(holder.exitCode() == 0) }
                #expect(eventually { harbord.harbor(["list"]).exitCode() == 0 }, "closed connections were not given back")
                #expect(harbord.stop() == 0)
            }
        }

        /// P12: messages waiting for a service that has not checked in are
        /// charged to their sender's uid: root's fourth is refused (its reply
        /// right gets overQuota), nobody's still waits, the service gets the
        /// ones that were kept, in order, and root's charge is released by it.
        @Test(.requiresRoot("to run a child as nobody")) func P12_messagesWaitingForAServiceAreBoundedPerUid() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(policy: "shared later owner=0\nshared after owner=0\n",
                                             extraArguments: ["--max-pending-per-uid", "3"])
                #expect(harbord.waitUntilReady())
                let client = try harbord.client()
                let later = try client.lookUp("later")
                let replies = ReceiveRight()
                for index in 0..<4 {
                    var message = Message(id: 10 + Int32(index), text: "root \(index)")
                    message.setReplyRight(replies.makeSendOnceRight())
                    try later.send(message, timeout: .seconds(2))
                }
                let refusal = try replies.receive(timeout: .seconds(5))
                #expect(refusal.id == BootstrapError.Code.overQuota.rawValue)
                #expect(refusal.text.contains("uid 0 has 3 messages waiting"), "\(refusal.text)")
                #expect(harbord.harbor(["send", "later", "from", "nobody"], asNobody: true).exitCode() == 0)
                #expect(eventually { (try? client.list().first { $0.name == "later" }) != nil })
                usleep(100_000)  // nobody's message reaches harbord's list of waiting messages
                let service = try client.checkIn("later")
                let texts = try (0..<4).map { _ in try service.receive(timeout: .seconds(5)).text }
                #expect(texts == ["root 0", "root 1", "root 2", "from nobody"])
                let extra = arrival(on: service, within: .milliseconds(100))
                #expect(extra == nil, "the refused message was kept: \(extra ?? "")")
                // Root's three are the service's now: root may leave three more.
                let after = try client.lookUp("after")
                let moreReplies = ReceiveRight()
                for index in 0..<3 {
                    var message = Message(id: 20, text: "again \(index)")
                    message.setReplyRight(moreReplies.makeSendOnceRight())
                    try after.send(message, timeout: .seconds(2))
                }
                let late = arrival(on: moreReplies, within: .milliseconds(300))
                #expect(late == nil, "root's charge was not released at check-in: \(late ?? "")")
                #expect(harbord.stop() == 0)
            }
        }

        /// P12: one uid cannot fill a waiting name's queue: root sends 1,100
        /// messages to a declared name not checked in (its per-uid limit
        /// raised out of the way); 128 wait, the rest are refused with
        /// overQuota; a message nobody sends after that still waits and
        /// reaches the service at check-in. (Before, root's took all 1,024
        /// places and nobody's was dropped while `harbor send` said "sent".)
        @Test(.requiresRoot("to run a child as nobody")) func P12_oneUidCannotFillAWaitingNamesQueue() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(policy: "shared later owner=0\n", extraArguments: ["--max-pending-per-uid", "4096"])
                #expect(harbord.waitUntilReady())
                let client = try harbord.client()
                let later = try client.lookUp("later")
                let replies = ReceiveRight()
                try replies.setQueueLimit(1_024)
                var refused = 0
                for index in 0..<1_100 {
                    var message = Message(id: 10, text: "root \(index)")
                    message.setReplyRight(replies.makeSendOnceRight())
                    try later.send(message, timeout: .seconds(5))
                    while let refusal = try? replies.receive(timeout: .zero) {
                        #expect(refusal.id == BootstrapError.Code.overQuota.rawValue)
                        refused += 1
                    }
                }
                while refused < 1_100 - BootstrapQuotas.pendingPerNamePerUser, let refusal = try? replies.receive(timeout: .seconds(5)) {
                    #expect(refusal.text.contains("its share of the name's queue"), "\(refusal.text)")
                    refused += 1
                }
                #expect(refused == 1_100 - BootstrapQuotas.pendingPerNamePerUser)
                #expect(harbord.harbor(["send", "later", "from", "nobody"], asNobody: true).exitCode() == 0)
                usleep(200_000)  // nobody's message reaches harbord's list of waiting messages
                let service = try client.checkIn("later")
                var texts: [String] = []
                while let text = arrival(on: service, within: .milliseconds(300)) { texts.append(text) }
                // On a loaded machine nobody's message may still be on its way (it moved with the port).
                if texts.count == BootstrapQuotas.pendingPerNamePerUser, let late = arrival(on: service, within: .seconds(5)) {
                    texts.append(late)
                }
                #expect(texts.count == BootstrapQuotas.pendingPerNamePerUser + 1)
                #expect(texts.first == "root 0")
                #expect(texts.last == "from nobody", "nobody's message was not kept: \(texts.suffix(2))")
                #expect(harbord.stop() == 0)
            }
        }

        /// P12: descriptors are shared: at a small descriptor limit (400:
        /// a share is about 20), one uid (nobody, many processes holding
        /// names) is refused at its share, long before it fills harbord's
        /// table; root still connects and checks names in; when nobody's
        /// processes exit, nobody may come back.
        @Test(.requiresRoot("to run a child as nobody")) func P12_oneUidCannotFillTheDescriptorTable() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(extraArguments: ["--max-descriptors", "400", "--descriptor-reserve", "16"])
                #expect(harbord.waitUntilReady())
                var hoarders: [Child] = []
                var refusedAt: Int?
                for index in 0..<40 {
                    let holder = harbord.harbor(["hold", "h.\(index)"], asNobody: true)
                    if holder.waitForStdout("holding 1 name", before: .now + .seconds(5)) {
                        hoarders.append(holder)
                    } else {
                        #expect(holder.exitCode() == 6, "refusal: \(holder.stderrSoFar)")
                        refusedAt = index
                        break
                    }
                }
                #expect(refusedAt != nil, "nobody filled harbord with \(hoarders.count) processes")
                #expect((refusedAt ?? 99) <= 8, "nobody held \(hoarders.count) processes, more than its share of 400 descriptors")
                let client = try harbord.client()
                let mine = try (0..<3).map { HeldName(try client.checkIn("root.\($0)")) }
                #expect(try client.list().filter { $0.scope == .user(0) }.count == 3)
                for holder in hoarders { kill(holder.pid, SIGTERM) }
                for holder in hoarders { _ = holder.waitForExit() }
                #expect(eventually {
                    harbord.harbor(["hold", "back", "--seconds", "0.1"], asNobody: true).exitCode() == 0
                }, "nobody's descriptors were not released")
                #expect(mine.count == 3)
                #expect(harbord.stop() == 0)
            }
        }
    }
}

/// A receive right kept in an array.
final class HeldName {
    let port: ReceiveRight
    init(_ port: consuming ReceiveRight) { self.port = port }
}

/// The bootstrap error `body` throws, or nil.
func code(of body: () throws -> Void) -> BootstrapError.Code? {
    do { try body() } catch let error as BootstrapError { return error.code } catch { return nil }
    return nil
}

/// The text of a message arriving on `port` within `timeout`, or nil.
func arrival(on port: borrowing ReceiveRight, within timeout: Duration) -> String? {
    do { return try port.receive(timeout: timeout).text } catch { return nil }
}

/// Whether `condition` holds within `seconds`, polled every 50 ms.
func eventually(_ seconds: Double = 3, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}
