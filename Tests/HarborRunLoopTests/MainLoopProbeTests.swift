// Harbor — main-loop behaviours proven in a child process: the main queue (RL14), @MainActor (A03), SIGTERM (RL19).
//
// Swift Testing runs tests on worker threads; the test process's main thread
// belongs to the async runtime, so no test can run `Loop.main`. Each test
// here runs `harbor-mainloop-probe` (built beside the test bundle), whose
// main thread runs the Harbor main loop, and asserts what it printed.
import Foundation
import Glibc
@testable import HarborRunLoop
import HarborTestSupport
import Testing

/// The probe executable, next to this test binary.
private func probeURL() -> URL {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("harbor-mainloop-probe")
}

/// Runs the probe to its end; returns its lines and exit status.
private func runProbe(_ argument: String) throws -> (lines: [String], status: Int32) {
    let process = Process()
    process.executableURL = probeURL()
    process.arguments = [argument]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    return (lines, process.terminationStatus)
}

extension RunLoopTests {
    @Suite struct MainLoopProbeTests {
        @Test func RL14_mainLoopDrainsDispatchMainQueueInCommonModesOnly() throws {
            let (lines, status) = try runProbe("main-queue")
            #expect(status == 0)
            // Posted before the run: not drained while running a non-common
            // mode ("tracking" times out first), drained by the default mode.
            let tracking = try #require(lines.firstIndex(of: "tracking run: timedOut"))
            let block1 = try #require(lines.firstIndex(of: "block1 ran: main thread true, mode default"))
            #expect(tracking < block1)
            #expect(lines.contains("default run: handledSource"))
            // Once "tracking" is common, main-queue work runs there too.
            #expect(lines.contains("block2 ran: main thread true, mode tracking"))
            #expect(lines.contains("common tracking run: handledSource"))
            #expect(lines.last == "done")
        }

        @Test func A03_mainActorWorkRunsOnTheMainRunLoop() throws {
            let (lines, status) = try runProbe("main-queue")
            #expect(status == 0)
            // A Task { @MainActor in … } started on another thread runs on the
            // main thread inside Harbor's run of the default mode, and resumes
            // there after awaiting another actor.
            #expect(lines.contains("main actor ran: main thread true, mode default"))
            #expect(lines.contains("main actor resumed after await: main thread true, value 42"))
            #expect(!lines.contains { $0.hasPrefix("timeout") })
        }

        @Test func RL19_sigtermFromOutsideIsHandledInTheMainLoop_childIsReaped() throws {
            let process = Process()
            process.executableURL = probeURL()
            process.arguments = ["signals"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // Wait for "ready" (the signal source is in the loop), then SIGTERM.
            var text = ""
            while !text.contains("ready\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            #expect(text.contains("ready\n"))
            process.terminate()  // SIGTERM
            text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let lines = text.split(separator: "\n").map(String.init)
            // Misuse is a clear error; then SIGTERM arrives as a source on the
            // main thread, and the probe exits normally (status 0, not killed).
            #expect(lines.first == "unblocked: signal not blocked")
            #expect(lines.contains("SIGTERM received: signal 15, on main thread true"))
            #expect(lines.contains("child: exited(code: 3)"))
            #expect(lines.contains("zombie left: false"))
            #expect(lines.last == "stopped cleanly")
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 0)
        }
    }
}
