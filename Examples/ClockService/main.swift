// clock-service — the clock as an XPC listener under systemd (Docs/WriteAService.md).
//
//   clock-service [--name NAME] [--allow-uid UID]...
//
// Checks NAME (com.example.clock) in with harbord and answers `now` and
// `alarm`, and publishes a tick each second to every subscriber until it
// goes away. Only its own user (and each --allow-uid) may call: any other
// uid's session is refused (peerRequirementNotMet). Tells systemd it is
// ready, pings its watchdog from the main run loop, stops on SIGTERM.
// Prints "ready NAME PID" on standard output once it serves.
import ClockInterface
import Glibc
import HarborRunLoop
import HarborSystemd
import HarborXPC
import Synchronization

/// Writes one line to standard error (the journal, under systemd) or standard output.
func say(_ text: String, to descriptor: CInt = 2) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}

func fail(_ text: String) -> Never {
    say("clock-service: \(text)")
    exit(1)
}

/// NAME and who may call, from the command line.
func parse() -> (name: String, allowed: [XPCPeerRequirement]) {
    var name = ClockNames.service
    var allowed: [XPCPeerRequirement] = [.isFromSameUser()]
    var arguments = CommandLine.arguments.dropFirst()
    while let option = arguments.popFirst() {
        switch (option, arguments.popFirst()) {
        case ("--name", let value?): name = value
        case ("--allow-uid", let value?):
            guard let uid = UInt32(value) else { fail("--allow-uid needs a numeric uid, not \(value)") }
            allowed.append(.hasUserID(uid))
        default: fail("usage: clock-service [--name NAME] [--allow-uid UID]...")
        }
    }
    return (name, allowed)
}
let (name, allowed) = parse()

// snippet: service-signals
// Before any thread starts: SIGTERM and SIGINT are read from a signalfd on
// the main run loop, not delivered to whichever thread runs.
do { try SignalSource.block([SIGTERM, SIGINT]) } catch { fail("\(error)") }
// end snippet

// snippet: service-listener
// The ticks: each subscriber on a port of its own; one that is slow
// loses its oldest ticks (a clock's latest matter), never another's.
let ticks: XPCPublisher<ClockTime>
let listener: XPCListener
do {
    ticks = try XPCPublisher<ClockTime>(policy: .dropOldest(keep: 4))
    // Checked on the session request and on every message, on the
    // kernel's word about who sent it.
    let requirement = XPCPeerRequirement.anyOf(allowed)
    listener = try XPCListener(service: name, requirement: requirement) { request in
        request.accept { message in
            if message.isSubscriptionRequest {
                try? ticks.subscribe(message)         // answers the request itself
                return nil
            }
            switch try? message.decode(as: ClockRequest.self) {
            case .now?:
                return ClockTime.current()
            case .alarm(let seconds)?:                // this session waits; others do not
                sleep(UInt32(min(max(seconds, 0), 3600)))
                return ClockTime.current()
            default:
                return nil                            // the caller gets noReply
            }
        }
    }
} catch {
    fail("cannot serve \(name): \(error)")
}
// end snippet

// snippet: service-loop
// The main run loop: a tick each second, systemd's watchdog pings, SIGTERM.
let loop = Loop.current
let notifier = ServiceNotifier()
let subscribers = Atomic(-1)
loop.add(LoopTimer(after: .seconds(1), repeating: .seconds(1), tolerance: .milliseconds(10), label: "tick") { _ in
    ticks.publish(ClockTime.current())
    let count = ticks.subscriberCount
    if subscribers.exchange(count, ordering: .relaxed) != count {
        _ = try? notifier.status("serving \(name) to \(count) subscribers")
        say("\(count) subscribers")
    }
}, forMode: .default)
do {
    let stop = try SignalSource(signals: [SIGTERM, SIGINT]) { signal in
        _ = try? notifier.stopping(status: "stopping on signal \(signal.signal)")
        ticks.cancel(reason: "the clock service stopped")
        listener.cancel()
        exit(0)
    }
    loop.add(stop, forMode: .default)
    try notifier.ready(status: "serving \(name)")     // Type=notify: active from here
    try notifier.startWatchdog(on: loop)              // WatchdogSec=: pings at half of it
} catch {
    fail("\(error)")
}
say("ready \(name) \(getpid())", to: 1)
loop.run()
// end snippet
fail("the main loop returned")
