// clock-client — a client of the clock service (Docs/WriteAService.md).
//
//   clock-client [--name NAME] now               "now TIME from pid PID"
//   clock-client [--name NAME] alarm SECONDS     "alarm TIME from pid PID", once it rings
//   clock-client [--name NAME] subscribe COUNT   "tick TIME from pid PID" for COUNT ticks, then goes away
//   clock-client [--name NAME] repl              those commands, one a line on standard input, on one session
//
// A failure prints "error CODE REASON" (a one-shot command then exits 1).
// While an alarm is pending the client watches the service's process: if it
// dies, the error says how long after its exit the call failed, and when
// (CLOCK_REALTIME, seconds since 1970):
// "error connectionInterrupted after MS ms from pid PID's exit, at S.NNNNNNNNN: REASON".
import ClockInterface
import Glibc
import HarborSystem
import HarborXPC

/// Writes one line to standard output at once (tests and scripts wait for it).
func say(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// `d` in milliseconds, to the microsecond.
func milliseconds(_ d: Duration) -> String {
    let micros = d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
    let fraction = String(abs(micros) % 1000)
    return (micros < 0 ? "-" : "") + "\(abs(micros) / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}

func describe(_ error: XPCRichError) -> String { "error \(error.code.rawValue) \(error.reason)" }

// snippet: client-now
/// `now`: one call, its reply decoded; the kernel says who answered.
func now(_ session: XPCSession) throws(XPCRichError) -> String {
    let reply = try session.sendSync(ClockRequest.now)
    let time = try reply.decode(as: ClockTime.self)
    return "now \(time) from pid \(reply.sender.pid)"
}
// end snippet

/// `alarm SECONDS`: a call that stays pending, while the service's
/// process is watched, so a death says how long the error took.
func alarm(_ session: XPCSession, seconds: Int) throws(XPCRichError) -> String {
    let service = try session.sendSync(ClockRequest.now).sender.pid
    let watch = DeathWatch(pid: service)
    do {
        let time = try session.sendSync(ClockRequest.alarm(seconds: seconds)).decode(as: ClockTime.self)
        return "alarm \(time) from pid \(time.servedBy)"
    } catch {
        let failed = ContinuousClock.now
        let wall = ClockTime.current()
        guard let exited = watch.exit(within: .seconds(1)) else { throw error }
        let nanoseconds = String(wall.nanoseconds)
        let at = "\(wall.seconds)." + String(repeating: "0", count: 9 - nanoseconds.count) + nanoseconds
        throw XPCRichError(error.code, "after \(milliseconds(failed - exited)) ms from pid \(service)'s exit, at \(at): \(error.reason)")
    }
}

// snippet: client-subscribe
/// `subscribe COUNT`: COUNT ticks, then the subscription goes (and with
/// it, at the service, the subscriber). A restart of the service does not
/// end it: within 30 s the service's next instance takes it again.
func subscribe(_ session: XPCSession, count: Int) throws(XPCRichError) {
    let ticks = try session.subscribe(ClockRequest.subscribe, as: ClockTime.self, resubscribeWithin: .seconds(30))
    for _ in 0..<count {
        let tick = try ticks.next()
        say("tick \(tick) from pid \(tick.servedBy)")
    }
    ticks.cancel()
}
// end snippet

func run(_ command: [Substring], on session: XPCSession) throws(XPCRichError) {
    switch (command.first, command.dropFirst().first.flatMap { Int($0) }) {
    case ("now"?, nil): say(try now(session))
    case ("alarm"?, let seconds?): say(try alarm(session, seconds: seconds))
    case ("subscribe"?, let count?): try subscribe(session, count: count)
    default: say("error usage: now | alarm SECONDS | subscribe COUNT | quit")
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var name = ClockNames.service
if arguments.first == "--name", arguments.count > 1 {
    name = arguments[1]
    arguments.removeFirst(2)
}

if arguments.first == "repl" {
    // One session for every command: after a restart of the service it
    // reconnects by itself, on the next call.
    var session: XPCSession?
    while let line = readLine() {
        let command = line.split(separator: " ")
        if command.first == "quit" { break }
        do {
            if session == nil { session = try XPCSession(machService: name) }
            if let session { try run(command, on: session) }
        } catch {
            say(describe(error))
        }
    }
    session?.cancel(reason: "the client quit")
} else {
    do {
        let session = try XPCSession(machService: name)
        try run(arguments[...].map { Substring($0) }, on: session)
        session.cancel(reason: "done")
    } catch {
        say(describe(error))
        exit(1)
    }
}
