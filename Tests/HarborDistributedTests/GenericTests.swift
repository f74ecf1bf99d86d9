// HarborDistributed tests — generic distributed functions and their checked substitutions (D09).
import Distributed
import HarborCoding
import HarborDistributed
import HarborDistributedProbe
import HarborPorts
import HarborTestSupport
import Testing

/// A type only this test process has: the probe process cannot take it.
struct OnlyInTheTests: Codable, Sendable, Equatable {
    var n: Int
}

/// A type that is not `Codable`, named as a substitution by a raw peer.
struct NotCodableHere: Sendable {}

extension DistributedTests {
    @Suite struct Generics {
        /// D09: a generic distributed function answers with each caller's
        /// substitution, between two systems and across processes; a type
        /// the serving process does not have is refused
        /// `invalidSubstitution`, and the actor serves on.
        @Test func D09_genericFunctionsAnswerAcrossSystemsAndProcesses() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let local = try ProbeCounter.resolve(id: try host.exportedID(of: counter), using: caller)
            #expect(__isRemoteActor(local))
            #expect(try await local.echo(5) == 5)
            #expect(try await local.echo("five") == "five")
            #expect(try await local.echo([1.5, 2.5]) == [1.5, 2.5])
            #expect(try await local.echo(["a": [1, 2]]) == ["a": [1, 2]])
            #expect(try await local.echo(OnlyInTheTests(n: 3)) == OnlyInTheTests(n: 3), "one process has the type")
            #expect(try await local.pair(1, "x") == "Int String")

            let harbord = PrivateHarbord()
            let probe = harbord.serve("com.example.d09")
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let remote = try system.resolve(name: "com.example.d09", as: ProbeCounter.self)
            #expect(try await remote.processID() == probe.pid)
            #expect(try await remote.echo(7) == 7)
            #expect(try await remote.echo(["k": "v"]) == ["k": "v"])
            #expect(try await remote.echo(ProbeError.refused(reason: "a value")) == .refused(reason: "a value"))
            #expect(try await remote.pair([true], 2.0) == "Array<Bool> Double")
            #expect(await actorCode { _ = try await remote.echo(OnlyInTheTests(n: 1)) } == .invalidSubstitution,
                    "the probe has no type of that name")
            #expect(try await remote.add(2) == 2, "the actor served on")
        }

        /// D09: a raw peer's substitution names are refused
        /// `invalidSubstitution`, never looked up unchecked: another
        /// spelling of a type (`SqySiG`, which `_typeByName` takes as
        /// `Int?`), a symbolic reference (a byte the runtime would follow as
        /// an offset), a name too long, a type that is not `Codable`, a
        /// name no type has, and fewer or more substitutions than the
        /// function's generic parameters. The actor serves on.
        @Test func D09_hostileSubstitutionNamesAreRefusedWithATypedError() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let id = try host.exportedID(of: counter)
            let port = try #require(id.right)

            // Real calls of echo and pair, caught at a port of ours, to learn the wire.
            struct Header: Codable { var target: String; var generics: [String] }
            func caught(_ call: @escaping @Sendable (ProbeCounter) async throws -> Void) async throws -> Header {
                let trap = ReceiveRight()
                let fake = try ProbeCounter.resolve(id: HarborActorID(right: trap.makeSendRight()), using: caller)
                Task { try? await call(fake) }
                let message = try trap.receive(timeout: .seconds(5))
                var reader = try MessageValueReader(Message(id: message.id, body: message.body))
                return try reader.next(Header.self)
            }
            let echo = try await caught { _ = try await $0.echo(4) }
            #expect(echo.generics == [_mangledTypeName(Int.self)])
            let pair = try await caught { _ = try await $0.pair(4, "x") }
            #expect(pair.generics.count == 2)

            func answer(_ target: String, _ generics: [String], _ arguments: [any Codable]) throws -> Message {
                var writer = MessageValueWriter()
                try writer.append(Header(target: target, generics: generics))
                for argument in arguments { try writer.append(argument) }
                return try port.sendAndReceive(try writer.message(id: 0x4841_4301), timeout: .seconds(5))
            }
            func code(_ answer: borrowing Message) -> String? {
                guard answer.id == 0x4841_4305 else { return "answer \(answer.id)" }
                return answer.text.split(separator: "\t").first.map(String.init)
            }
            let good = try answer(echo.target, echo.generics, [4])
            #expect(good.id == 0x4841_4302, "the caught call, sent as is, runs")

            #expect(_typeByName("SqySiG") == Int?.self && _mangledTypeName(Int?.self) != "SqySiG",
                    "the runtime takes another spelling of Int?")
            let refused: [(String, [String])] = [
                ("another spelling", ["SqySiG"]),
                ("a symbolic reference", ["\u{1}\u{0}\u{0}\u{0}\u{0}"]),
                ("a symbolic reference after a plain prefix", ["Sa\u{2}\u{10}\u{0}\u{0}\u{0}G"]),
                ("too long", [String(repeating: "Sa", count: 300) + "Si" + String(repeating: "G", count: 300)]),
                ("not Codable", [try #require(_mangledTypeName(NotCodableHere.self))]),
                ("a function type", ["yyc"]),
                ("no such type", ["4Nope0A0V"]),
                ("none", []),
                ("too many", ["Si", "Si"]),
                ("17", Array(repeating: "Si", count: 17)),
            ]
            for (what, generics) in refused {
                #expect(code(try answer(echo.target, generics, [4])) == "invalid substitution", "\(what)")
            }
            #expect(code(try answer(pair.target, ["Si"], [4, "x"])) == "invalid substitution", "too few for pair")
            #expect(try answer(pair.target, pair.generics, [4, "x"]).id == 0x4841_4302, "pair, sent as caught, runs")
            let remote = try ProbeCounter.resolve(id: id, using: caller)
            #expect(try await remote.pair(1, 2) == "Int Int")
            #expect(try await remote.add(2) == 2, "the actor served on")
        }
    }
}
