// HarborDistributed tests — hostile invocations (D05).
import Distributed
import HarborCoding
import HarborDistributed
import HarborDistributedProbe
import HarborPorts
import HarborTestSupport
import Testing

/// An actor of another type, to aim its functions' names at a ProbeCounter.
distributed actor Impostor {
    typealias ActorSystem = HarborActorSystem
    distributed func add(_ n: Int) -> Int { n }
    distributed func shout(_ text: String) -> String { text }
}

extension DistributedTests {
    @Suite struct Adversary {
        /// What a raw peer gets back for `message` sent to `port`.
        static func answer(to message: consuming Message, at port: SendRight) throws -> Message {
            try port.sendAndReceive(message, timeout: .seconds(5))
        }

        static func failureCode(_ answer: borrowing Message) -> String? {
            guard answer.id == 0x4841_4305 else { return nil }
            return answer.text.split(separator: "\t").first.map(String.init)
        }

        /// D05: a raw peer's malformed invocations are answered with a typed
        /// failure or dropped, never trapping the server: a garbage body,
        /// another id, too few or mistyped arguments, an unknown target, and
        /// another actor type's function aimed at this actor (the runtime
        /// finds functions by name alone, so the system checks the type).
        @Test func D05_malformedInvocationsAreAnsweredWithErrorsNeverTraps() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let id = try host.exportedID(of: counter)
            let port = try #require(id.right)

            // A real invocation, caught at a port of ours, to learn the wire.
            let trap = ReceiveRight()
            let fake = try ProbeCounter.resolve(id: HarborActorID(right: trap.makeSendRight()), using: caller)
            let call = Task { try await fake.add(9) }
            var caught = try trap.receive(timeout: .seconds(5))
            #expect(caught.id == 0x4841_4301 && caught.hasReplyRight)
            var reader = try MessageValueReader(Message(id: caught.id, body: caught.body))
            struct Header: Codable { var target: String; var generics: [String] }
            let header = try reader.next(Header.self)
            #expect(try reader.next(Int.self) == 9)
            #expect(header.target.contains("ProbeCounter") || header.target.hasPrefix("$s"))
            try caught.reply(Message(id: 0x4841_4302, body: try MessageEncoder().encode(11, id: 0).body))
            #expect(try await call.value == 11, "a well-formed answer from anyone holding the reply right is the answer")

            func invocation(_ values: (inout MessageValueWriter) throws -> Void) throws -> Message {
                var writer = MessageValueWriter()
                try values(&writer)
                return try writer.message(id: 0x4841_4301)
            }
            let garbage = Message(id: 0x4841_4301, body: [0x01, 0x0A, 0xFF, 0xFF, 0x13])
            #expect(Self.failureCode(try Self.answer(to: garbage, at: port)) == "invalid invocation")
            #expect(Self.failureCode(try Self.answer(to: Message(id: 77, text: "hello"), at: port)) == "invalid invocation")
            let tooFew = try invocation { try $0.append(header) }
            #expect(Self.failureCode(try Self.answer(to: tooFew, at: port)) == "invalid invocation")
            let mistyped = try invocation { try $0.append(header); try $0.append("nine") }
            #expect(Self.failureCode(try Self.answer(to: mistyped, at: port)) == "invalid invocation")
            let unknown = try invocation { try $0.append(Header(target: header.target + "x", generics: [])); try $0.append(1) }
            #expect(Self.failureCode(try Self.answer(to: unknown, at: port)) == "unknown target")
            let nonsense = try invocation { try $0.append(Header(target: "\u{0}\u{1}garbage", generics: ["??"])) }
            #expect(Self.failureCode(try Self.answer(to: nonsense, at: port)) == "unknown target")
            try port.send(try invocation { try $0.append(header); try $0.append(1) }, timeout: .seconds(1))  // no reply right: dropped

            // Another actor type's functions, aimed at the ProbeCounter's port.
            let impostor = try Impostor.resolve(id: id, using: caller)
            #expect(await actorCode { _ = try await impostor.add(1) } == .unknownTarget)
            #expect(await actorCode { _ = try await impostor.shout("hi") } == .unknownTarget)

            let remote = try ProbeCounter.resolve(id: id, using: caller)
            #expect(try await remote.add(2) == 2, "the actor served on; no hostile call ran (a call without a reply right is dropped)")
        }
    }
}
