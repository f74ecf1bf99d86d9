// harbor-adversary — a hostile local process for the security tests (P11, P12).
//
// Runs as another uid (the tests start it through `setpriv`) and holds only
// what an honest client holds: harbord's socket, the welcome packet, a send
// right to a service. It writes raw packets (Docs/WireFormat.md) with raw
// system calls, not through Harbor, so nothing stops it lying. Each attack
// is a subcommand; it prints one line of `key=value` findings (and writes
// it to `--out`) and exits 0 unless it could not even start.
//
//   harbor-adversary ATTACK --target harbord --socket PATH [options]
//   harbor-adversary ATTACK --target service [options]   (right 0 of the
//       first message on HARBOR_INITIAL_FD: a send right to the service)
import Glibc
import HarborPeerCommands

let options = Options(Array(CommandLine.arguments.dropFirst()))
Report.out = options.out
signal(SIGPIPE, SIG_IGN)

let target: Target
switch options.target {
case .harbord:
    guard let path = options.socketPath, let reached = Target.harbord(path) else { Report.fail("no welcome from harbord") }
    target = reached
case .service:
    guard let reached = Target.service(grantID: PeerCommand.grant) else { Report.fail("no send right to the service") }
    target = reached
}

let report = Report(options.attack, target: options.target)
report.set("victim", target.identity.description)
switch options.attack {
case "noop": report.set("servedAfter", Protocol.ping(target).inbound != nil)
case "forge-receive": Forgery.forgeReceive(target, options, report)
case "forge-send": Forgery.forgeSend(target, options, report)
case "forge-send-once": Forgery.forgeSendOnce(target, options, report)
case "relay-claim": Forgery.relayClaim(target, options, report)
case "crash": Traps.crash(target, options, report)
case "wedge": SharedCounter.wedge(target, options, report)
case "scribble": SharedCounter.scribble(target, options, report, everything: false)
case "scribble-magic": SharedCounter.scribble(target, options, report, everything: true)
case "scribble-room": SharedCounter.scribbleRoom(target, options, report)
case "hoard-slots": SharedCounter.hoardSlots(target, options, report)
case "wait-flood": Fragments.waitFlood(target, options, report)
case "fragments": Fragments.unfinished(target, options, report)
case "die-mid-message": Fragments.dieMidMessage(target, options, report)
case "regions": Regions.attack(target, options, report)
case "identities": Registry.attack(target, options, report)
case "hoard-rights": Hoarding.rights(target, options, report)
case "hoard-names": Hoarding.names(target, options, report)
case "stop-reading": StopReading.attack(target, options, report)
case "lookup-flood": LookUpFlood.attack(target, options, report)
case "deputy-reply": DeputyReply.attack(target, options, report)
case "deputy-session": DeputySession.attack(target, options, report)
case "waiting-flood": WaitingFlood.attack(target, options, report)
case "hold-share": ShareHolding.attack(target, options, report)
case "list-flood": ListFlood.attack(target, options, report)
case "queue-bomb": QueueBomb.attack(target, options, report)
default: Report.fail("unknown attack \(options.attack)")
}
report.emit()
