// clock-actor-service — the clock as a distributed actor, served by harbord name.
//
//   clock-actor-service [NAME]     serves a Clock as NAME (com.example.clock.actor);
//                                  prints "ready NAME PID", then serves until killed
import ClockInterface
import Glibc
import HarborDistributed

/// Writes one line to standard output at once.
func say(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

let name = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : ClockNames.actor
// snippet: actor-service
let system: HarborActorSystem
do {
    system = try HarborActorSystem()
    let clock = Clock(actorSystem: system)
    try system.serve(clock, as: name)          // held while the name stands
} catch {
    say("error \(error.code) \(error.detail)")
    exit(1)
}
say("ready \(name) \(getpid())")
while true { pause() }                         // calls run on the system's own threads
// end snippet
