// clock-actor-client — resolves the distributed-actor clock by name from another process.
//
//   clock-actor-client [--name NAME] now               "now TIME from pid PID"
//   clock-actor-client [--name NAME] alarm SECONDS     "alarm TIME from pid PID", once it rings
//   clock-actor-client [--name NAME] subscribe COUNT   "tick TIME from pid PID" for COUNT ticks
//
// A failure prints "error CODE DETAIL" and exits 1: a clock that dies with
// a call pending fails it with deadActor.
import ClockInterface
import Glibc
import HarborDistributed

/// Writes one line to standard output at once.
func say(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// Runs the command against the clock named `name`.
func run(_ arguments: [String], name: String) async throws {
    // snippet: actor-client
    let system = try HarborActorSystem()
    defer { system.shutdown() }
    let clock = try system.resolve(name: name, as: Clock.self)   // a remote reference
    // end snippet
    let argument = arguments.count > 1 ? Int(arguments[1]) : nil
    switch (arguments.first, argument) {
    case ("now"?, nil):
        let time = try await clock.now()
        say("now \(time) from pid \(time.servedBy)")
    case ("alarm"?, let seconds?):
        let time = try await clock.alarm(seconds: seconds)
        say("alarm \(time) from pid \(time.servedBy)")
    case ("subscribe"?, let count?):
        // snippet: actor-subscribe
        let (ticks, arrive) = AsyncStream.makeStream(of: ClockTime.self)
        let receiver = TickReceiver(actorSystem: system) { arrive.yield($0) }
        try await clock.subscribe(receiver)        // the receiver travels as a send right
        for await tick in ticks.prefix(count) { say("tick \(tick) from pid \(tick.servedBy)") }
        // end snippet
    default:
        say("error usage: now | alarm SECONDS | subscribe COUNT")
        exit(64)
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var name = ClockNames.actor
if arguments.first == "--name", arguments.count > 1 {
    name = arguments[1]
    arguments.removeFirst(2)
}
do {
    try await run(arguments, name: name)
} catch let error as HarborActorSystemError {
    say("error \(error.code) \(error.detail)")
    exit(1)
} catch {
    say("error \(error)")
    exit(1)
}
