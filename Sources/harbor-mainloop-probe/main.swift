// Harbor — harbor-mainloop-probe: main-thread behaviours the tests check from outside (RL14, A03, RL19).
//
// Swift Testing runs tests on worker threads while the test process's main
// thread belongs to the async runtime, so nothing in a test can run the main
// loop. The tests spawn this probe instead and check what it prints.
//   harbor-mainloop-probe main-queue   DispatchQueue.main and @MainActor on the Harbor main loop
//   harbor-mainloop-probe signals      SIGTERM through a signal source, a child reaped by a process source
import CHarborLinux
import Dispatch
import Glibc
import HarborPorts
import HarborRunLoop
import HarborSystem

/// Prints one line and flushes, so a reading parent sees it at once.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

func onMainThread() -> Bool { SystemThread.isMainThread }

/// Starts `body` on a new detached thread.
func detached(_ body: @escaping @Sendable () -> Void) {
    SystemThread.start(body).detach()
}

/// RL14 and A03: the main loop drains the main queue in common modes only.
func mainQueue() {
    let loop = Loop.main
    // 1. Posted before the loop runs; the loop runs a mode that is not common.
    DispatchQueue.main.async {
        say("block1 ran: main thread \(onMainThread()), mode \(Loop.main.currentMode?.name ?? "none")")
    }
    let keepTracking = LoopTimer(after: .seconds(3600)) { _ in }
    loop.add(keepTracking, forMode: "tracking")
    let trackingResult = loop.run(mode: "tracking", timeout: .milliseconds(150), returnAfterSourceHandled: false)
    say("tracking run: \(trackingResult)")
    // 2. The default mode is common: the block runs there.
    let defaultResult = loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
    say("default run: \(defaultResult)")
    // 3. A custom mode joins the common set: main-queue work now runs there too.
    loop.addCommonMode("tracking")
    DispatchQueue.main.async {
        say("block2 ran: main thread \(onMainThread()), mode \(Loop.main.currentMode?.name ?? "none")")
    }
    let commonTrackingResult = loop.run(mode: "tracking", timeout: .seconds(10), returnAfterSourceHandled: true)
    say("common tracking run: \(commonTrackingResult)")
    // 4. A03: @MainActor work from another thread runs on the main loop.
    let watchdog = LoopTimer(after: .seconds(20)) { _ in
        say("timeout: @MainActor work never ran")
        Loop.main.stop()
    }
    loop.add(watchdog, forMode: .default)
    detached {
        Task { @MainActor in
            say("main actor ran: main thread \(onMainThread()), mode \(Loop.main.currentMode?.name ?? "none")")
            let value = await Doubler().double(21)
            say("main actor resumed after await: main thread \(onMainThread()), value \(value)")
            Loop.main.stop()
        }
    }
    loop.runUntilStopped()
    watchdog.invalidate()
    keepTracking.invalidate()
    say("done")
}

actor Doubler {
    func double(_ value: Int) -> Int { value * 2 }
}

/// Spawns `arguments` with an empty signal mask (the child must not inherit
/// our blocked SIGTERM); returns its pid.
func spawn(_ arguments: [String]) -> pid_t? {
    var pid: pid_t = 0
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    return posix_spawn(&pid, arguments[0], nil, &attributes, argv, environ) == 0 ? pid : nil
}

/// RL19: a daemon's shape — SIGTERM and a child's exit handled in the main loop.
func signals(selfKill: Bool) {
    // Start from a known mask: a parent (a Dispatch worker thread, say) may
    // have spawned us with SIGTERM already blocked, and masks are inherited.
    var term = sigset_t()
    sigemptyset(&term)
    sigaddset(&term, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &term, nil)
    // Misuse first: SIGTERM is not blocked yet, so a signal source is refused.
    do {
        _ = try SignalSource(signals: [SIGTERM]) { _ in }
        say("unblocked: accepted (wrong)")
    } catch {
        say("unblocked: \(error.code)")
    }
    do {
        try SignalSource.block([SIGTERM])
        let loop = Loop.main
        let term = try SignalSource(signals: [SIGTERM]) { info in
            say("SIGTERM received: signal \(info.signal), on main thread \(onMainThread())")
            Loop.main.stop()
        }
        loop.add(term, forMode: .default)
        guard let child = spawn(["/bin/sh", "-c", "exit 3"]) else {
            say("spawn failed")
            exit(1)
        }
        let process = try ProcessSource(pid: child) { exit in
            say("child: \(exit.status)")
        }
        loop.add(process, forMode: .default)
        say("ready")
        if selfKill {
            detached { kill(getpid(), SIGTERM) }
        }
        loop.runUntilStopped()
        // The child may end after SIGTERM was handled: give it its pass.
        while process.isValid { _ = loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true) }
        var status: CInt = 0
        say("zombie left: \(waitpid(child, &status, WNOHANG) > 0)")
        term.invalidate()
        say("stopped cleanly")
    } catch {
        say("error: \(error)")
        exit(1)
    }
}

switch CommandLine.arguments.dropFirst().first {
case "main-queue": mainQueue()
case "signals": signals(selfKill: false)
case "signals-self": signals(selfKill: true)
default:
    say("usage: harbor-mainloop-probe main-queue|signals|signals-self")
    exit(2)
}
