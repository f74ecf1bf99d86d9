// HarborDistributed tests — calls by number over one reply port per link (D08).
import Distributed
import Glibc
import HarborCoding
import HarborDistributed
import HarborDistributedProbe
import HarborPorts
import HarborTestSupport
import Testing

extension DistributedTests {
    @Suite struct CallsByNumber {
        static let invocation: Int32 = 0x4841_4301
        static let returned: Int32 = 0x4841_4302
        static let call: Int32 = 0x4841_4306
        static let introducingCall: Int32 = 0x4841_4307

        /// `number` as the 8 little-endian bytes the wire appends.
        static func bytes(_ number: UInt64) -> [UInt8] { withUnsafeBytes(of: number.littleEndian) { Array($0) } }

        /// The number at the end of `body`, and the body before it.
        static func split(_ body: [UInt8]) -> (rest: [UInt8], number: UInt64) {
            var number: UInt64 = 0
            for byte in body.suffix(8).reversed() { number = number << 8 | UInt64(byte) }
            return (Array(body.dropLast(8)), number)
        }

        /// The answer `value` to the call numbered `number`.
        static func answer(_ value: Int, _ number: UInt64) throws -> Message {
            Message(id: returned, body: try MessageEncoder().encode(value, id: 0).body + bytes(number))
        }

        /// D08: the first call to an actor's port goes with a send-once reply
        /// right; its answer names the serving process, and every later call
        /// goes by number, without a reply right: the first of them hands
        /// over a send right to the link's one reply port (its last carried
        /// right), the next ones nothing. Answers are matched by number: a
        /// forged or unknown number, another id, a body too short for a
        /// number, and a duplicate or late answer answer no call, and
        /// nothing traps.
        @Test func D08_callsAfterTheFirstGoByNumberAndOnlyTheirOwnAnswerCounts() async throws {
            let caller = try HarborActorSystem()
            defer { caller.shutdown() }
            let trap = ReceiveRight()
            let fake = try ProbeCounter.resolve(id: HarborActorID(right: trap.makeSendRight()), using: caller)

            let first = Task { try await fake.add(1) }
            var caught = try trap.receive(timeout: .seconds(5))
            #expect(caught.id == Self.invocation && caught.hasReplyRight, "the first call carries a send-once reply right")
            try caught.reply(Message(id: Self.returned, body: try MessageEncoder().encode(1, id: 0).body))
            #expect(try await first.value == 1)

            let second = Task { try await fake.add(2) }
            var introducing = try trap.receive(timeout: .seconds(5))
            #expect(introducing.id == Self.introducingCall && !introducing.hasReplyRight)
            let rights = introducing.carriedRights
            #expect(rights.last == .send, "the link's reply port rides along: \(rights)")
            let replies = try introducing.takeSendRight(at: rights.count - 1)
            let (withLink, number) = Self.split(introducing.body)
            let (invocationBody, link) = Self.split(withLink)
            #expect(link != 0 && !invocationBody.isEmpty)

            // Hostile answers first: none of them is the second call's.
            try replies.send(try Self.answer(-1, number &+ 1000), timeout: .seconds(1))        // unknown number
            try replies.send(Message(id: 77, body: Self.bytes(number)), timeout: .seconds(1))  // not an answer
            try replies.send(Message(id: Self.returned, body: [1, 2, 3]), timeout: .seconds(1))  // no number
            try await Task.sleep(for: .milliseconds(100))
            #expect(!second.isCancelled)
            try replies.send(try Self.answer(2, number), timeout: .seconds(1))
            #expect(try await second.value == 2, "the answer with the call's number is the answer")
            try replies.send(try Self.answer(-2, number), timeout: .seconds(1))                // duplicate, late

            let third = Task { try await fake.add(3) }
            let plain = try trap.receive(timeout: .seconds(5))
            #expect(plain.id == Self.call && !plain.hasReplyRight && plain.carriedRights.isEmpty,
                    "once the link was handed over, a call carries no right")
            let (plainWithLink, thirdNumber) = Self.split(plain.body)
            #expect(Self.split(plainWithLink).number == link, "the same link")
            #expect(thirdNumber != number, "numbers are never reused")
            try replies.send(try Self.answer(-3, number), timeout: .seconds(1))                // the earlier call's number
            try replies.send(try Self.answer(3, thirdNumber), timeout: .seconds(1))
            #expect(try await third.value == 3, "a late answer to an earlier call answered nothing")
        }

        /// D08: a real actor in another system answers calls by number, many
        /// at once from many tasks, each its own; the serving system keeps
        /// one link (the send right to the caller's reply port) per calling
        /// system, charged to the caller's uid, and lets it go when the
        /// caller's reply port dies.
        @Test func D08_theServingSystemKeepsOneLinkPerCallerChargedToItsUid() async throws {
            let host = try HarborActorSystem()
            defer { host.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let id = try host.exportedID(of: counter)
            let uid = UInt32(getuid())
            do {
                let caller = try HarborActorSystem()
                let other = try HarborActorSystem()
                let remote = try ProbeCounter.resolve(id: id, using: caller)
                #expect(try await remote.add(1) == 1)
                #expect(host.callerLinkCount(for: uid) == 0, "the first call goes with a send-once right")
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<200 { group.addTask { try await remote.add(1) } }
                    var answers = Set<Int>()
                    for try await total in group { answers.insert(total) }
                    #expect(answers.count == 200, "each call ran once and got its own answer")
                }
                #expect(try await remote.add(0) == 201)
                #expect(host.callerLinkCount(for: uid) == 1, "one link for the calling system, whatever its calls")
                let second = try ProbeCounter.resolve(id: id, using: other)
                _ = try await second.add(0)
                _ = try await second.add(0)
                #expect(host.callerLinkCount(for: uid) == 2, "another system of the process is another link")
                caller.shutdown()
                other.shutdown()
            }
            #expect(await eventually { host.callerLinkCount(for: uid) == 0 }, "given back when the callers' reply ports died")
        }

        /// D08: a caller uid keeps at most `callerLinksPerUid` links in a
        /// serving system; an introducing call past it is answered `busy`
        /// through the right it brought and runs nothing. A call by number
        /// on a link the system keeps no right for, or with a body too short
        /// for its numbers, is dropped unrun; the actor serves on.
        @Test func D08_linksPerUidAreBoundedAndCallsOnUnknownLinksAreDropped() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let port = try #require(try host.exportedID(of: counter).right)

            // A real call's invocation body, caught at a trap.
            let trap = ReceiveRight()
            let fake = try ProbeCounter.resolve(id: HarborActorID(right: trap.makeSendRight()), using: caller)
            let call = Task { try await fake.add(5) }
            var caught = try trap.receive(timeout: .seconds(5))
            let body = caught.body
            try caught.reply(Message(id: Self.returned, body: try MessageEncoder().encode(0, id: 0).body))
            _ = try await call.value

            let replies = ReceiveRight()
            try replies.setQueueLimit(1024)
            // Unknown link, too short: dropped, unanswered, unrun.
            try port.send(Message(id: Self.call, body: body + Self.bytes(999_999) + Self.bytes(1)), timeout: .seconds(1))
            try port.send(Message(id: Self.call, body: [1, 2, 3]), timeout: .seconds(1))
            var noRight = Message(id: Self.introducingCall, body: body + Self.bytes(999_998) + Self.bytes(2))
            let scratch = ReceiveRight()
            noRight.attach(scratch.makeSendOnceRight())                 // not a send right: dropped
            try port.send(noRight, timeout: .seconds(1))

            let uid = UInt32(getuid())
            let share = HarborActorSystem.callerLinksPerUid
            for link in 0..<(share + 2) {
                var introducing = Message(id: Self.introducingCall, body: body + Self.bytes(UInt64(10_000 + link))
                                          + Self.bytes(UInt64(link)))
                introducing.attach(replies.makeSendRight())
                try port.send(introducing, timeout: .seconds(5))
                let answer = try replies.receive(timeout: .seconds(5))
                #expect(answer.notification == nil)
                let number = Self.split(answer.body).number
                #expect(number == UInt64(link), "answered by its own number")
                if link < share {
                    #expect(answer.id == Self.returned)
                } else {
                    #expect(answer.id == 0x4841_4305 && answer.text.hasPrefix("busy\t"), "past the uid's share: busy")
                }
            }
            #expect(host.callerLinkCount(for: uid) == share)
            let stray = replies.tryReceive() != nil
            #expect(!stray, "the dropped calls were not answered")
            let remote = try ProbeCounter.resolve(id: try host.exportedID(of: counter), using: caller)
            #expect(try await remote.add(0) == 5 * share, "only the calls on kept links ran")
        }
    }
}
