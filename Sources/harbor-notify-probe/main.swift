// Harbor — a tiny service the systemd tests start as a child: it speaks sd_notify from a run loop and serves activated sockets.
//
//   harbor-notify-probe notify [--wedge-at MS --wedge-for MS] [--stop-at MS]
//       READY=1 + STATUS=, watchdog pings from a main-loop timer, STATUS=serving
//       at 100 ms, optionally wedges the loop (a callout that blocks), then
//       STOPPING=1 and exit 0.
//   harbor-notify-probe activate
//       takes LISTEN_FDS, schedules each socket on the run loop, answers the
//       first connection with "pong name=<name> fds=<n> listening=<0|1>",
//       then STOPPING=1 and exit 0.
import Glibc
import HarborRunLoop
import HarborSystemd

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
    return Int(arguments[index + 1]) ?? value
}

func fail(_ text: String) -> Never {
    let line = "harbor-notify-probe: \(text)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

let loop = Loop.current
let notifier = ServiceNotifier()

switch CommandLine.arguments.dropFirst().first {
case "notify":
    let wedgeAt = option("--wedge-at", default: -1)
    let wedgeFor = option("--wedge-for", default: 0)
    let stopAt = option("--stop-at", default: 1000)
    do {
        try notifier.ready(status: "probe started")
        try notifier.startWatchdog(on: loop)
    } catch { fail("\(error)") }
    loop.add(LoopTimer(after: .milliseconds(100)) { _ in _ = try? notifier.status("serving") }, forMode: .default)
    if wedgeAt >= 0 {
        // A callout that never returns in time: the loop is wedged, so its
        // watchdog timer cannot fire (sleeping here simulates the hang).
        loop.add(LoopTimer(after: .milliseconds(wedgeAt)) { _ in usleep(UInt32(wedgeFor) * 1000) }, forMode: .default)
    }
    loop.add(LoopTimer(after: .milliseconds(stopAt)) { _ in
        _ = try? notifier.stopping()
        exit(0)
    }, forMode: .default)
    loop.run()
    fail("loop returned")

case "activate":
    let sockets: [ActivatedSocket]
    do { sockets = try SocketActivation.takeListenDescriptors() } catch { fail("\(error)") }
    guard !sockets.isEmpty else { fail("no LISTEN_FDS") }
    var sources: [ActivatedSocketSource] = []
    let count = sockets.count
    for socket in sockets {
        do {
            sources.append(try ActivatedSocketSource(socket, loop: loop) { socket in
                let connection = accept(socket.descriptor, nil, nil)
                guard connection >= 0 else { return }
                let reply = "pong name=\(socket.name) fds=\(count) listening=\(socket.isListeningStreamSocket ? 1 : 0)\n"
                _ = reply.withCString { write(connection, $0, strlen($0)) }
                close(connection)
                _ = try? notifier.stopping()
                exit(0)
            })
        } catch { fail("\(error)") }
    }
    _ = try? notifier.ready(status: "listening on \(count) socket(s)")
    loop.run()
    fail("loop returned")

default:
    fail("usage: harbor-notify-probe notify|activate [options]")
}
