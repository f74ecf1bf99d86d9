// Harbor fuzzing — HarborXPC's session protocol: what a listener and a
// session decode from a peer, in process.
//
// A real `ListenerLoop` (the thread an `XPCListener` runs, on a port of
// its own: no harbord) accepts every session with a handler that decodes an
// `Ask` and answers an `Answer`. Per input, an honest session
// is opened on it; the input is then up to 12 steps, `[where] [flags] [id]
// [length u16] body…`: `where` % 3 picks the listener's port, the session's
// port, or the client's reply path (the message becomes the answer to a
// call, decoded as `XPCReceivedMessage` and parsed as a failure); `flags`
// bit 0 a reply right, bits 1–2 that many send rights to a scratch port,
// bit 3 a send-once right to it; `id` below 10 is that wire id (connect …
// cancel, then 0, then call), else a u32 follows. Bodies are cut at 4 KiB.
// On the reply path a reply or failure is also read as a numbered one
// (its last 8 bytes taken off as the call number), as a session's reply
// port reads it.
// Invariants: nothing traps; every message with a reply right gets one
// answer of a kind its port sends (accepted with one right, rejected,
// reply, a failure naming a known code) or is dropped (a send-once
// notification) — and a `request` to the session is always answered; after
// each input the honest session's call is answered, every session the
// listener adopted ends (the table is empty), and descriptors and threads
// are back to the baseline.
//
// `wake` is never sent to the listener's port: the listener stops on a
// `wake` from its own process, and here every sender is its own process.
import Glibc
import HarborCoding
import HarborPorts
import HarborSystem
@testable import HarborXPC

enum XPCTarget {
    /// The request the fuzzed listener's sessions decode.
    struct Ask: Codable, Sendable {
        var op: String
        var n: Int
    }

    /// The fuzzed listener's answer.
    struct Answer: Codable, Sendable {
        var n: Int
        var count: Int
    }

    struct Setup: Sendable {
        let listener: SendRight
        /// A port of ours the inputs' rights name (kept for the process's life).
        let scratchPort: Listening
        var scratch: SendRight { scratchPort.wake }
        let sessions: Sessions
    }

    /// The sessions the listener adopted and has not seen end.
    final class Sessions: Sendable {
        let names = HarborLock<Set<PortName>>([])
    }

    /// A session's count of messages.
    final class Counter: Sendable {
        private let value = HarborLock(0)
        func next() -> Int { value.withLock { value -> Int in value += 1; return value } }
    }

    static let wire: [Int32] = [
        XPCWire.connect, XPCWire.accepted, XPCWire.rejected, XPCWire.message, XPCWire.request,
        XPCWire.reply, XPCWire.failure, XPCWire.cancel, 0, XPCWire.call,
    ]

    static let setup: Setup = {
        let port = Listening(ReceiveRight())
        let sessions = Sessions()
        let loop = ListenerLoop(
            port: port, requirement: nil,
            handler: { request in
                let count = Counter()
                return request.accept { message in
                    let seen = count.next()
                    guard let ask = try? message.decode(as: Ask.self) else {
                        message.fail(XPCRichError(.codingFailed, "not an ask"))
                        return nil
                    }
                    return Answer(n: ask.n, count: seen)
                }
            },
            adopt: { name, _ in sessions.names.withLock { _ = $0.insert(name) }; return true },
            ended: { name in _ = sessions.names.withLock { $0.remove(name) } })
        do { try SystemThread.spawn { loop.run() }.detach() } catch { fail("xpc: no listener thread: \(error)") }
        return Setup(listener: port.wake, scratchPort: Listening(ReceiveRight()), sessions: sessions)
    }()

    nonisolated(unsafe) private static var baseline: (descriptors: Set<CInt>, threads: Int)?

    static func run(_ data: [UInt8]) {
        let setup = setup
        if baseline == nil {
            for seed in seeds { execute(seed, setup) }
            settle(setup)
            baseline = (DescriptorTable.open(), threads())
        }
        execute(data, setup)
        settle(setup)
        if var known = baseline?.descriptors {
            DescriptorTable.expectNoneOpened(since: &known)
            baseline?.descriptors = known
        }
        if let expected = baseline?.threads {
            var waited = 0
            while threads() > expected && waited < 2000 { usleep(1000); waited += 1 }
            if threads() > expected { fail("xpc: \(threads()) threads after the input, \(expected) before") }
        }
    }

    private static func execute(_ data: [UInt8], _ setup: Setup) {
        var reader = FuzzReader(data)
        var session: SendRight? = open(setup)
        var steps = 0
        while !reader.isAtEnd && steps < 12 {
            steps += 1
            let place = reader.choice(3)
            let flags = reader.byte()
            let selector = Int(reader.byte())
            let id = selector < wire.count ? wire[selector] : Int32(bitPattern: reader.u32())
            let body = reader.bytes(Int(reader.u16()) % 4097)
            switch place {
            case 0:
                deliver(id == XPCWire.wake ? XPCWire.connect : id, body, flags, to: setup.listener, setup, isSession: false)
            case 1:
                if session == nil { session = open(setup) }
                if let session { deliver(id, body, flags, to: session, setup, isSession: true) }
                if id == XPCWire.cancel || id == XPCWire.wake { session = nil }  // it ends the session
            default:
                replyPath(id, body)
            }
        }
        // The listener still serves an honest call.
        if session == nil { session = open(setup) }
        guard let session else { fail("xpc: the listener no longer accepts a session") }
        guard case .success(let answer) = call(session, Ask(op: "probe", n: 42)), answer.n == 42 else {
            fail("xpc: the session no longer answers an honest call")
        }
    }

    /// Opens a session as a client does: a connect with a send-once reply right.
    private static func open(_ setup: Setup) -> SendRight? {
        let reply = ReceiveRight()
        var connect = Message(id: XPCWire.connect)
        connect.setReplyRight(reply.makeSendOnceRight())
        do { try setup.listener.send(connect, timeout: .seconds(10)) } catch { fail("xpc: connect not sent: \(error)") }
        guard var answer = try? reply.receive(timeout: .seconds(10)) else { fail("xpc: a connect went unanswered") }
        guard answer.id == XPCWire.accepted, answer.notification == nil, answer.carriedRights.count == 1,
              let right = try? answer.takeSendRight(at: 0) else {
            fail("xpc: an honest connect got \(answer.id): \(answer.text)")
        }
        return right
    }

    private static func call(_ session: SendRight, _ ask: Ask) -> Result<Answer, XPCRichError> {
        let reply = ReceiveRight()
        guard var request = try? MessageEncoder().encode(ask, id: XPCWire.request) else { fail("xpc: encoding") }
        request.setReplyRight(reply.makeSendOnceRight())
        do { try session.send(request, timeout: .seconds(10)) } catch { fail("xpc: a request not sent: \(error)") }
        guard let answer = try? reply.receive(timeout: .seconds(10)) else { fail("xpc: a request went unanswered") }
        if answer.id == XPCWire.failure { return .failure(XPCSession.failure(answer.text)) }
        guard answer.id == XPCWire.reply else { fail("xpc: an answer with id \(answer.id)") }
        let received = XPCReceivedMessage(answer)
        do { return .success(try received.decode(as: Answer.self)) } catch { return .failure(error) }
    }

    /// One message to the listener or a session, and the check of its answer.
    private static func deliver(_ id: Int32, _ body: [UInt8], _ flags: UInt8, to port: SendRight, _ setup: Setup,
                                isSession: Bool) {
        var message = Message(id: id, body: body)
        for _ in 0..<Int((flags >> 1) & 3) { message.attach(setup.scratch) }
        if flags & 8 != 0 { message.attach(ReceiveRight().makeSendOnceRight()) }
        let reply = ReceiveRight()
        let answered = flags & 1 != 0
        if answered { message.setReplyRight(reply.makeSendOnceRight()) }
        do { try port.send(message, timeout: .seconds(10)) } catch {
            if isSession { return }  // the session ended (an earlier cancel): its port is gone
            fail("xpc: the listener's port refused a message: \(error)")
        }
        guard answered else { return }
        guard let answer = try? reply.receive(timeout: .seconds(10)) else { fail("xpc: message \(id) left its reply right waiting 10 s") }
        if answer.notification != nil {
            if isSession && (id == XPCWire.request || id == XPCWire.message) { fail("xpc: a session dropped a \(id) unanswered") }
            if !isSession && id == XPCWire.connect { fail("xpc: the listener dropped a connect unanswered") }
            return
        }
        let kind = answer.id, text = answer.text, rights = answer.carriedRights.count
        if kind == XPCWire.reply && isSession {
            let received = XPCReceivedMessage(answer)
            if (try? received.decode(as: Answer.self)) == nil { fail("xpc: a reply that is no answer") }
        } else {
            switch kind {
            case XPCWire.accepted where !isSession && id == XPCWire.connect:
                if rights != 1 { fail("xpc: an acceptance with \(rights) rights") }
            case XPCWire.rejected where !isSession && id == XPCWire.connect:
                break
            case XPCWire.failure:
                let parts = text.split(separator: "\t", maxSplits: 1)
                if parts.first.flatMap({ XPCRichError.Code(rawValue: String($0)) }) == nil {
                    fail("xpc: a failure with no known code: \(text)")
                }
            default:
                fail("xpc: message \(id) to the \(isSession ? "session" : "listener") got answer \(kind)")
            }
        }
        if reply.tryReceive() != nil { fail("xpc: a second answer") }
    }

    /// A peer's answer as the client's reply path reads it: as a reply
    /// decoded, or a failure parsed to its typed error.
    private static func replyPath(_ id: Int32, _ body: [UInt8]) {
        var numbered = Message(id: id, body: body)
        if XPCWire.takeNumber(from: &numbered) != nil {
            if numbered.body.count + XPCWire.callNumberSize != body.count { fail("xpc: a call number of the wrong size") }
            _ = try? XPCReceivedMessage(numbered).decode(as: Answer.self)
        } else if body.count >= XPCWire.callNumberSize {
            fail("xpc: no call number in a body of \(body.count) bytes")
        }
        let message = Message(id: id, body: body)
        if id == XPCWire.failure {
            let error = XPCSession.failure(message.text)
            if error.reason.unicodeScalars.count > XPCWire.maximumReason { fail("xpc: a failure's reason is not bounded") }
            return
        }
        let received = XPCReceivedMessage(message)
        _ = try? received.decode(as: Answer.self)
        _ = try? received.decode(as: [String: [Int?]].self)
    }

    /// Waits (up to 5 s) for every session the listener adopted to end.
    private static func settle(_ setup: Setup) {
        var waited = 0
        while !setup.sessions.names.withLock({ $0.isEmpty }) && waited < 5000 { usleep(1000); waited += 1 }
        let left = setup.sessions.names.withLock { $0.count }
        if left != 0 { fail("xpc: \(left) sessions still held after the input") }
    }

    private static func threads() -> Int {
        guard let directory = opendir("/proc/self/task") else { return 0 }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { count += 1 }
        }
        closedir(directory)
        return count
    }

    // MARK: Seeds

    /// One step of each kind and wire id, bodies encoded as the protocol's.
    static let seeds: [[UInt8]] = {
        let ask = (try? MessageEncoder().encode(Ask(op: "echo", n: 7), id: XPCWire.request).body) ?? []
        let answer = (try? MessageEncoder().encode(Answer(n: 7, count: 1), id: XPCWire.reply).body) ?? []
        var seeds: [[UInt8]] = []
        func step(_ place: Int, _ flags: UInt8, _ selector: Int, _ body: [UInt8]) -> [UInt8] {
            var writer = FuzzWriter()
            writer.byte(place); writer.byte(flags); writer.byte(selector)
            writer.u16(body.count); writer.bytes(body)
            return writer.bytes
        }
        for selector in 0..<wire.count {
            seeds.append(step(0, 1, selector, []))            // to the listener, with a reply right
            seeds.append(step(1, 1, selector, ask))           // to the session
        }
        seeds.append(step(1, 1 | 4 | 8, 4, ask))              // a request carrying rights
        let number: [UInt8] = [3, 0, 0, 0, 0, 0, 0, 0]
        seeds.append(step(1, 0, 9, ask + number))             // a numbered call (no reply port: dropped)
        seeds.append(step(1, 1, 9, ask + number))             // a numbered call with a reply right too
        seeds.append(step(1, 0, 9, [1, 2]))                   // a call too short for a number
        seeds.append(step(2, 0, 5, answer + number))          // a numbered reply, on the client's path
        seeds.append(step(1, 0, 3, ask))                      // a one-way message
        seeds.append(step(2, 0, 5, answer))                   // a reply, on the client's path
        seeds.append(step(2, 0, 6, Array("codingFailed\tno".utf8)))
        seeds.append(step(2, 0, 6, Array("nonsense".utf8)))
        seeds.append(step(1, 1, 4, ask) + step(1, 1, 7, []) + step(1, 1, 4, ask))  // cancelled mid-way
        return seeds
    }()
}
