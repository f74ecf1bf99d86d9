// harbor-xpc-probe — the XPC tests' other process: a listener, or a client.
//
//   harbor-xpc-probe serve NAME [none|same-user|root]   a listener; prints "ready"
//   harbor-xpc-probe call NAME N                        one sendSync; prints "reply N UID" or "error CODE"
//   harbor-xpc-probe connect NAME MS                    asks for a session, waiting at most MS ms for the
//                                                       answer; prints "accepted" or "error CODE", and exits
//   harbor-xpc-probe publish NAME                       a listener publishing Tick(n) every 50 ms; prints "ready"
//   harbor-xpc-probe subscribe NAME LAST [LIMIT]        subscribes; prints "subscribed", "event N" per event,
//                                                       "done" after event LAST, or "ended CODE"
//   harbor-xpc-probe methods NAME                       a listener routing methods echo and check, its interface
//                                                       published (Methods.swift); prints "ready"
//   harbor-xpc-probe siege NAME                         a hostile client (Siege.swift), until killed
//   harbor-xpc-probe accept-late NAME GO                a listener whose first session request prints "holding",
//                                                       is accepted once file GO exists, and the process exits
//                                                       200 ms after; prints "ready"
//   harbor-xpc-probe require-cgroup NAME CGROUP         opens a session requiring the service to be in CGROUP;
//                                                       prints "accepted" or "error CODE"
//   harbor-xpc-probe stream-bench NAME N MODE            publishes N ticks to a subscription of its own, taken by
//                                                       MODE (next, await, handler); prints "ms T" (StreamBench.swift)
//
// harbord is found as BootstrapClient() finds it ($HARBOR_BOOTSTRAP).
import Glibc
import HarborSystem
import HarborXPC

/// Writes one line to standard output at once (tests wait for it).
func line(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    line("usage: harbor-xpc-probe serve NAME [none|same-user|root] | call NAME N | connect NAME MS | publish NAME | subscribe NAME LAST [LIMIT] | methods NAME | siege NAME | accept-late NAME GO | require-cgroup NAME CGROUP | stream-bench NAME N MODE")
    exit(64)
}
switch arguments[1] {
case "serve":
    let requirement: XPCPeerRequirement? = switch arguments.count > 3 ? arguments[3] : "none" {
    case "same-user": .isFromSameUser()
    case "root": .isRoot()
    default: nil
    }
    let held = Held()
    let listener: XPCListener
    do {
        listener = try XPCListener(service: arguments[2], requirement: requirement) { request in
            let counter = Counter()
            return request.accept { message in
                guard let ask = try? message.decode(as: Ask.self) else { return nil }
                switch ask.op {
                case "hang":
                    held.messages.withLock { $0.append(message) }
                    return nil
                case "exit":
                    exit(0)
                default:
                    return Answer(n: ask.n, uid: message.sender.uid, pid: message.sender.pid, count: counter.next())
                }
            }
        }
    } catch {
        line("error \(error.code.rawValue) \(error.reason)")
        exit(1)
    }
    line("ready \(listener.service)")
    while true { pause() }
case "call":
    do {
        let session = try XPCSession(machService: arguments[2])
        let answer = try session.sendSync(Ask(op: "echo", n: Int(arguments[3]) ?? 0)).decode(as: Answer.self)
        line("reply \(answer.n) \(answer.uid)")
    } catch {
        line("error \(error.code.rawValue) \(error.reason)")
    }
case "connect":
    do {
        let session = try XPCSession(machService: arguments[2],
                                     connectTimeout: .milliseconds(Int(arguments.count > 3 ? arguments[3] : "") ?? 1000))
        _ = try session.sendSync(Ask(op: "echo", n: 0))
        line("accepted")
    } catch {
        line("error \(error.code.rawValue)")
    }
case "publish":
    let ticks: XPCPublisher<Tick>
    let listener: XPCListener
    do {
        let publisher = try XPCPublisher<Tick>(policy: .dropOldest(keep: 8))
        ticks = publisher
        listener = try XPCListener(service: arguments[2]) { request in
            request.accept { message in
                if message.isSubscriptionRequest { try? publisher.subscribe(message) }
                return nil
            }
        }
    } catch {
        line("error \(error.code.rawValue) \(error.reason)")
        exit(1)
    }
    line("ready \(listener.service)")
    var n = 0
    while true {
        ticks.publish(Tick(n: n))
        n += 1
        usleep(50_000)
    }
case "subscribe":
    let last = arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0
    let limit = arguments.count > 4 ? Int(arguments[4]) ?? 16 : 16
    do {
        let session = try XPCSession(machService: arguments[2])
        let events = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, queueLimit: limit)
        line("subscribed")
        while true {
            let tick = try events.next()
            line("event \(tick.n)")
            if tick.n == last {
                line("done")
                exit(0)
            }
        }
    } catch {
        line("ended \(error.code.rawValue) \(error.reason)")
    }
case "accept-late":
    guard arguments.count > 3 else { exit(64) }
    let go = arguments[3]
    let listener: XPCListener
    do {
        listener = try XPCListener(service: arguments[2]) { request in
            line("holding")
            let deadline = ContinuousClock.now + .seconds(30)
            while access(go, F_OK) != 0, .now < deadline { usleep(1000) }
            // The answer goes out when this handler returns; then the process ends.
            SystemThread.start { usleep(200_000); exit(0) }.detach()
            return request.accept { _ in nil }
        }
    } catch {
        line("error \(error.code.rawValue) \(error.reason)")
        exit(1)
    }
    line("ready \(listener.service)")
    while true { pause() }
case "require-cgroup":
    guard arguments.count > 3 else { exit(64) }
    do {
        let session = try XPCSession(machService: arguments[2], requirement: .isInCgroup(arguments[3]))
        line("accepted")
        session.cancel(reason: "done")
    } catch {
        line("error \(error.code.rawValue)")
    }
case "methods":
    Methods.run(arguments[2])
case "siege":
    Siege.run(arguments[2])
case "stream-bench":
    guard arguments.count > 4, let count = Int(arguments[3]) else { exit(64) }
    StreamBench.run(arguments[2], count: count, mode: arguments[4])
default:
    exit(64)
}
