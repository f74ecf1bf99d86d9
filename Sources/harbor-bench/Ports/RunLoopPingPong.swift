// Harbor — Foundation's nearest equivalent: two RunLoops posting blocks to each other.
import CoreFoundation
import Dispatch
import Foundation

/// Both sides run a Foundation `RunLoop`; the client posts the request as a
/// block to the server's loop and runs its own loop until the server posts
/// the reply back. `RunLoop.perform` queues the block but does not wake a
/// sleeping loop on Linux, so each post is followed by `CFRunLoopWakeUp`,
/// the wake-up Foundation itself lacks a public name for.
final class RunLoopPingPong: BenchmarkVariant {
    let name = "foundation-runloop"
    let label = "RunLoop.perform + CFRunLoopWakeUp each way, both sides in RunLoop.run"

    /// The two loops. @unchecked: each loop is only run by its own thread;
    /// `perform` and `CFRunLoopWakeUp` are documented thread-safe. `replied`
    /// and `stopServer` are touched only by blocks running on the loop they
    /// belong to (client's and server's respectively).
    final class Loops: @unchecked Sendable {
        var client: RunLoop?
        var clientCF: CFRunLoop?
        var server: RunLoop?
        var serverCF: CFRunLoop?
        var replied = false
        var stopServer = false
        var clientKeepAlive: Timer?
    }

    private let server: SharedServerThread
    private let loops = Loops()

    init(server: SharedServerThread) { self.server = server }

    func start() throws {
        // The main thread's loop needs an item in the mode, or run(mode:before:) returns at once.
        let keepAlive = Timer(timeInterval: 1e9, repeats: false) { _ in }
        RunLoop.current.add(keepAlive, forMode: .default)
        loops.clientKeepAlive = keepAlive
        loops.client = RunLoop.current
        loops.clientCF = CFRunLoopGetCurrent()
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let loops = self.loops
        let ready = DispatchSemaphore(value: 0)
        server.thread.start {
            let loop = RunLoop.current
            let keepAlive = Timer(timeInterval: 1e9, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            loops.server = loop
            loops.serverCF = CFRunLoopGetCurrent()
            loops.stopServer = false
            ready.signal()
            while !loops.stopServer { _ = loop.run(mode: .default, before: .distantFuture) }
            keepAlive.invalidate()
        }
        ready.wait()
        guard let client = loops.client, let clientCF = loops.clientCF,
              let serverLoop = loops.server, let serverCF = loops.serverCF
        else { throw BenchmarkFailure("run loops missing") }
        let wake = UncheckedLoop(clientCF)
        measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            loops.replied = false
            serverLoop.perform {
                // On the server thread: answer by posting to the client's loop.
                loops.client?.perform {
                    loops.replied = true
                    CFRunLoopStop(CFRunLoopGetCurrent())
                }
                CFRunLoopWakeUp(wake.loop)
            }
            CFRunLoopWakeUp(serverCF)
            while !loops.replied { _ = client.run(mode: .default, before: .distantFuture) }
        }
        serverLoop.perform {
            loops.stopServer = true
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        CFRunLoopWakeUp(serverCF)
        server.thread.waitUntilIdle()
    }

    func stop() {
        loops.clientKeepAlive?.invalidate()
        loops.clientKeepAlive = nil
    }
}

/// A CFRunLoop reference for `CFRunLoopWakeUp` from another thread.
/// @unchecked: CFRunLoopWakeUp is thread-safe; nothing else is called through it.
struct UncheckedLoop: @unchecked Sendable {
    let loop: CFRunLoop
    init(_ loop: CFRunLoop) { self.loop = loop }
}
