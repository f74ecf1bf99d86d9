// Harbor fuzzing — HarborDistributed's invocation decoding: a call from another process.
//
// The input is `[mode] body…`: a message to a hosted distributed actor's
// port, the rest its body. `mode` bit 7 set: the message id is `mode`, not a
// call's; bits 0–1: that many send rights to the actor's own port ride
// along (an actor-reference argument may name them); bit 2: a send-once
// right to a scratch port too; bit 3: no reply right; bit 4 (D08): a call
// by number, id `call` (bit 5 too: `introducingCall`, with a send right to a
// reply port of ours as its last right), the body's last 16 bytes being
// the link id and the number as the fuzzer wrote them. The seeds are real
// calls of each of the actor's functions, caught at a port of ours, one
// with an argument of another type, and `add(3)` by number, introducing
// and not, its header in the array and (the last two) in a compact body,
// and the generic `same(3)` with hostile substitution names (D09: another
// spelling, a symbolic reference, a name too long, none, too many). The
// system runs the call (or refuses it) on its own thread.
// Invariants: nothing traps; a call with a reply right gets exactly one
// answer, never a send-once notification (the system always answers), of
// a kind a system sends, a failure naming a known code; an introducing
// call with a body long enough for its numbers gets exactly one answer at
// the port it handed over, ending with its number (forged, short or
// unknown-link calls by number get none, and nothing traps); the actor
// answers a good call after each input.
import HarborCoding
@testable import HarborDistributed
import HarborPorts
import HarborSystem

enum ActorsTarget {
    /// The hosting system, the actor's port, and the seeds, made once.
    struct Setup: Sendable {
        let system: HarborActorSystem
        let actor: ActorsFuzzedActor
        let port: SendRight
        let scratch: SendRight
        let seeds: [[UInt8]]
    }

    static let setup: Setup = {
        guard let system = try? HarborActorSystem() else { fail("actors: no actor system") }
        let actor = ActorsFuzzedActor(actorSystem: system)
        guard let id = try? system.exportedID(of: actor), let port = id.right else { fail("actors: no port") }
        let scratch = ReceiveRight()
        return Setup(system: system, actor: actor, port: port, scratch: scratch.makeSendRight(),
                     seeds: capture(system))
    }()

    /// Each function's real call, as an input: caught at a port of ours by
    /// a reference that resolves to it, then answered with a failure. Each
    /// call goes to a trap of its own: an answer teaches the system which
    /// process serves a port, and its next call there would go by number
    /// (D08), not as the plain first call the seeds are.
    private static func capture(_ system: HarborActorSystem) -> [[UInt8]] {
        let calls: [@Sendable (ActorsFuzzedActor) async throws -> Void] = [
            { _ = try await $0.add(3) },
            { _ = try await $0.echo("hello", [1, 2, 3]) },
            { _ = try await $0.shape(ActorsFuzzShape(a: -3, b: ["x": 1.5], c: [1, nil, 3], d: true)) },
            { _ = try await $0.meet($0) },
            { _ = try await $0.meet(nil) },
            { _ = try await $0.refuse(7) },
            { try await $0.nothing() },
            { _ = try await $0.same(3) },
        ]
        var seeds: [[UInt8]] = []
        for call in calls {
            let trap = ReceiveRight()
            guard let fake = try? ActorsFuzzedActor.resolve(id: HarborActorID(right: trap.makeSendRight()), using: system) else {
                fail("actors: no reference to the trap")
            }
            Task { try? await call(fake) }
            guard var caught = try? trap.receive(timeout: .seconds(10)) else { fail("actors: a seed call never came") }
            guard caught.id == ActorWire.invocation else { fail("actors: a seed call came as id \(caught.id), not a first call") }
            let rights = caught.carriedRights.count
            seeds.append([UInt8(min(rights, 3))] + caught.body)
            try? caught.reply(ActorWire.failure(HarborActorSystemError(.deadActor, "a seed")))
        }
        // add(3) with its argument `false`: well formed, of another type
        // (single-byte mutations of a seed rarely stay well formed).
        if let add = seeds.first, add.suffix(2) == [0x03, 0x06] {
            seeds.append(add.dropLast(2) + [0x01])
        }
        // add(3) by number (D08): introducing on link 7, then on it alone.
        if let add = seeds.first {
            let link = number(7), call = number(1)
            seeds.append([0x30] + add.dropFirst() + link + call)
            seeds.append([0x10] + add.dropFirst() + link + number(2))
        }
        // same(3) (the 8th function) with substitution names a hostile peer may send (D09).
        seeds += renamed(seeds[7], [
            ["SqySiG"], ["\u{1}\u{0}\u{0}\u{0}\u{0}"], ["Sa\u{2}\u{10}\u{0}\u{0}\u{0}G"],
            [String(repeating: "Sa", count: 300) + "Si" + String(repeating: "G", count: 300)], [], ["Si", "Si"],
        ])
        // add(3) by number with a compact body, as a system sends calls by
        // number: introducing on link 8, then on it alone.
        if let add = seeds.first {
            let compact = compacted(Array(add.dropFirst()))
            seeds.append([0x30] + compact + number(8) + number(1))
            seeds.append([0x10] + compact + number(8) + number(2))
        }
        return seeds
    }

    /// `body`, a first call's body of `add(Int)`, as a call by number's
    /// compact body (`CompactInvocation`).
    private static func compacted(_ body: [UInt8]) -> [UInt8] {
        var writer = MessageValueWriter()
        guard var reader = try? MessageValueReader(Message(id: ActorWire.invocation, body: body)),
              let header = try? reader.next(InvocationHeader.self), let value = try? reader.next(Int.self),
              (try? writer.append(value)) != nil, let arguments = try? writer.message(id: ActorWire.call),
              let compact = try? CompactInvocation.body(target: header.target, generics: header.generics,
                                                        arguments: arguments.body) else {
            fail("actors: the add seed has no compact form")
        }
        return compact
    }

    /// `seed`, a call of one argument, again with each of `names` as its
    /// generic substitutions.
    private static func renamed(_ seed: [UInt8], _ names: [[String]]) -> [[UInt8]] {
        guard var reader = try? MessageValueReader(Message(id: ActorWire.invocation, body: Array(seed.dropFirst()))),
              let header = try? reader.next(InvocationHeader.self), let value = try? reader.next(Int.self),
              header.generics.count == 1 else { fail("actors: the generic seed is not a call of same(Int)") }
        return names.map { generics in
            var writer = MessageValueWriter()
            var renamed = header
            renamed.generics = generics
            guard (try? writer.append(renamed)) != nil, (try? writer.append(value)) != nil,
                  let message = try? writer.message(id: ActorWire.invocation) else { fail("actors: a renamed seed did not encode") }
            return [seed[0]] + message.body
        }
    }

    static var seeds: [[UInt8]] { setup.seeds }

    static let answers: Set<Int32> = [ActorWire.returned, ActorWire.returnedVoid, ActorWire.threw, ActorWire.failed]

    /// `value`'s 8 little-endian bytes, as a call by number ends.
    private static func number(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    static func run(_ data: [UInt8]) {
        guard let mode = data.first else { return }
        let setup = setup
        let body = Array(data.dropFirst())
        if mode & 0x90 == 0x10 {
            byNumber(mode, body, setup)
            probe(setup)
            return
        }
        var message = Message(id: mode & 0x80 != 0 ? Int32(mode) : ActorWire.invocation, body: body)
        for _ in 0..<Int(mode & 3) { message.attach(setup.port) }
        if mode & 4 != 0 { message.attach(ReceiveRight().makeSendOnceRight()) }
        let reply = ReceiveRight()
        let answered = mode & 8 == 0
        if answered { message.setReplyRight(reply.makeSendOnceRight()) }
        do { try setup.port.send(message, timeout: .seconds(10)) } catch { fail("actors: the call could not be sent: \(error)") }
        if answered { check(reply) }
        probe(setup)
    }

    /// A call by number (D08). Introducing, with a body long enough for
    /// the link id and the number: exactly one answer at the port it
    /// handed over, ending with the number (the link share may be full:
    /// `busy` is an answer too). Otherwise the call may run on an earlier
    /// input's link, whose port is gone: nothing to check but the probe.
    private static func byNumber(_ mode: UInt8, _ body: [UInt8], _ setup: Setup) {
        let introducing = mode & 0x20 != 0
        var message = Message(id: introducing ? ActorWire.introducingCall : ActorWire.call, body: body)
        for _ in 0..<Int(mode & 3) { message.attach(setup.port) }
        if mode & 4 != 0 { message.attach(ReceiveRight().makeSendOnceRight()) }
        let replies = ReceiveRight()
        try? replies.setQueueLimit(16)
        if introducing { message.attach(replies.makeSendRight()) }
        do { try setup.port.send(message, timeout: .seconds(10)) } catch { fail("actors: the call could not be sent: \(error)") }
        guard introducing, body.count >= 2 * ActorWire.numberSize else {
            probe(setup)    // the system is done with the input when the probe's answer comes
            if replies.tryReceive() != nil { fail("actors: an answer to a call by number that names no kept link") }
            return
        }
        guard var answer = try? replies.receive(timeout: .seconds(10)) else { fail("actors: a call by number went unanswered for 10 s") }
        if answer.notification != nil { fail("actors: a notification at a link's reply port") }
        guard answers.contains(answer.id) else { fail("actors: an answer by number with id \(answer.id)") }
        let sent = body.suffix(ActorWire.numberSize).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard ActorWire.takeNumber(from: &answer) == sent else {
            fail("actors: an answer by number with another number")
        }
        if answer.id == ActorWire.failed, ActorWire.error(fromFailure: answer.text).code == .invalidReply {
            fail("actors: a failure with an unknown code: \(answer.text)")
        }
        probe(setup)
        if replies.tryReceive() != nil { fail("actors: a second answer by number") }
    }

    /// The one answer to a call.
    private static func check(_ reply: borrowing ReceiveRight) {
        guard let answer = try? reply.receive(timeout: .seconds(10)) else { fail("actors: a call went unanswered for 10 s") }
        if answer.notification != nil { fail("actors: the system dropped a call's reply right") }
        guard answers.contains(answer.id) else { fail("actors: an answer with id \(answer.id)") }
        if answer.id == ActorWire.failed {
            let error = ActorWire.error(fromFailure: answer.text)
            if error.code == .invalidReply { fail("actors: a failure with an unknown code: \(answer.text)") }
        }
        if reply.tryReceive() != nil { fail("actors: a second answer") }
    }

    /// The actor still answers a good call.
    private static func probe(_ setup: Setup) {
        // The seed of `nothing()`, the last function's call: a plain first
        // call carrying no right (a probe that did not run would let the
        // system still be busy with the input when the next one starts).
        guard setup.seeds.count > 6, case let seed = setup.seeds[6], seed.first == 0 else {
            fail("actors: the probe's seed is not a plain call of nothing()")
        }
        let reply = ReceiveRight()
        var message = Message(id: ActorWire.invocation, body: Array(seed.dropFirst()))
        message.setReplyRight(reply.makeSendOnceRight())
        do { try setup.port.send(message, timeout: .seconds(10)) } catch { fail("actors: the probe could not be sent: \(error)") }
        guard let answer = try? reply.receive(timeout: .seconds(10)), answer.id == ActorWire.returnedVoid else {
            fail("actors: the actor stopped answering")
        }
    }
}
