// harbor-actor-probe — the HarborDistributed tests' other process.
//
//   harbor-actor-probe serve NAME     serves a ProbeCounter as NAME; prints "ready NAME PID"
//   harbor-actor-probe call NAME N    resolves NAME, calls add(N); prints "total T" or "error CODE"
//   harbor-actor-probe spin NAME MS   resolves NAME, calls runUntilCancelled() in a task; prints
//                                     "calling", cancels the task MS ms later, prints "total T"
//                                     or "error CODE"
//   harbor-actor-probe flood NAME N   resolves NAME, makes N waitForOpen() calls at once; prints
//                                     "busy K" as the K-th is refused (busy), "answered A busy B
//                                     other C" when all are done, then calls add(1): "total T"
//
// harbord is found as BootstrapClient() finds it ($HARBOR_BOOTSTRAP).
import Glibc
import HarborDistributed
import HarborDistributedProbe

/// Writes one line to standard output at once (tests wait for it).
func line(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// `flood NAME N`: N `waitForOpen()` calls at once, then `add(1)`. A
/// function, not top-level code: in top-level async code the strings
/// interpolated around the task group's awaits leaked (LeakSanitizer,
/// Swift 6.3), and the probe's exit code said so.
func flood(_ system: HarborActorSystem, name: String, count: Int) async {
    do {
        let counter = try system.resolve(name: name, as: ProbeCounter.self)
        var answered = 0, busy = 0, other = 0
        await withTaskGroup(of: HarborActorSystemError.Code?.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do {
                        _ = try await counter.waitForOpen()
                        return nil
                    } catch let error as HarborActorSystemError {
                        return error.code
                    } catch {
                        return .invalidReply
                    }
                }
            }
            for await code in group {
                switch code {
                case nil: answered += 1
                case .busy?:
                    busy += 1
                    line("busy \(busy)")
                default:
                    other += 1
                    line("error \(code.map { "\($0)" } ?? "")")
                }
            }
        }
        line("answered \(answered) busy \(busy) other \(other)")
        let total = try await counter.add(1)
        line("total \(total)")
    } catch let error as HarborActorSystemError {
        line("error \(error.code) \(error.detail)")
    } catch {
        line("error \(error)")
    }
}

/// `spin NAME MS`: a `runUntilCancelled()` call whose task is cancelled
/// MS ms after it started (D11).
func spin(_ system: HarborActorSystem, name: String, milliseconds: Int) async {
    do {
        let counter = try system.resolve(name: name, as: ProbeCounter.self)
        let call = Task { try await counter.runUntilCancelled() }
        line("calling")
        try? await Task.sleep(for: .milliseconds(milliseconds))
        call.cancel()
        line("total \(try await call.value)")
    } catch let error as HarborActorSystemError {
        line("error \(error.code) \(error.detail)")
    } catch {
        line("error \(error)")
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    line("usage: harbor-actor-probe serve NAME | call NAME N | spin NAME MS | flood NAME N")
    exit(64)
}
let system: HarborActorSystem
do {
    system = try HarborActorSystem()
} catch {
    line("error \(error.code) \(error.detail)")
    exit(1)
}
switch arguments[1] {
case "serve":
    let counter = ProbeCounter(actorSystem: system)
    do {
        try system.serve(counter, as: arguments[2])
    } catch {
        line("error \(error.code) \(error.detail)")
        exit(1)
    }
    line("ready \(arguments[2]) \(getpid())")
    while true { pause() }
case "call":
    do {
        let counter = try system.resolve(name: arguments[2], as: ProbeCounter.self)
        let total = try await counter.add(Int(arguments.count > 3 ? arguments[3] : "1") ?? 1)
        line("total \(total)")
    } catch let error as HarborActorSystemError {
        line("error \(error.code) \(error.detail)")
    } catch {
        line("error \(error)")
    }
case "spin":
    await spin(system, name: arguments[2], milliseconds: Int(arguments.count > 3 ? arguments[3] : "500") ?? 500)
case "flood":
    await flood(system, name: arguments[2], count: Int(arguments.count > 3 ? arguments[3] : "1") ?? 1)
default:
    line("unknown command \(arguments[1])")
    exit(64)
}
