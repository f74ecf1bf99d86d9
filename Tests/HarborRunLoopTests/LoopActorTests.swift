// Harbor — loop-confined state without @unchecked Sendable: handlers isolated to a LoopActor (A04).
import Foundation
import Glibc
import HarborPorts
import HarborRunLoop
import HarborTestSupport
import Testing

// The code Docs/RunLoop.md shows under `<!-- snippet: loop-actor -->`, word for word
// (PortingGuideTests' GuideSnippetTests compares every guide's blocks with their sources).
// snippet: loop-actor
/// A daemon's bookkeeping: a plain class, not `Sendable`.
final class Tally {
    var messages: [Int32] = []
    var ticks = 0
}

/// The state of one session, confined to its loop's thread.
actor Session: LoopActor {
    nonisolated let loopExecutor: LoopExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { loopExecutor.asUnownedSerialExecutor() }
    let tally = Tally()

    init(loop: Loop) { loopExecutor = LoopExecutor(loop: loop) }

    func summary() -> String { "messages \(tally.messages), ticks \(tally.ticks)" }
}

/// Serves a port and a timer on `worker`'s loop; their handlers change the
/// session's state synchronously, isolated to it (no `await`, no lock).
func serve(_ inbox: consuming ReceiveRight, on worker: LoopWorker) throws -> (Session, SendRight) {
    let session = Session(loop: worker.loop)
    let port = try PortSource(inbox, session.confined { session, message in
        session.tally.messages.append(message.id)
    })
    let timer = LoopTimer(after: .milliseconds(1), repeating: .milliseconds(1), session.confined { session, timer in
        session.tally.ticks += 1
        if session.tally.ticks == 3 { timer.invalidate() }
    })
    worker.loop.add(port, forMode: .default)
    worker.loop.add(timer, forMode: .default)
    return (session, port.makeSendRight())
}
// end snippet

extension RunLoopTests {
    @Suite struct LoopActorTests {
        @Test func A04_handlersConfinedToALoopActorChangeItsStateOnTheLoopThread() async throws {
            let worker = LoopWorker(name: "a04")
            defer { worker.stop() }
            let (session, inbox) = try serve(ReceiveRight(), on: worker)
            for id in Int32(1)...3 { try inbox.send(Message(id: id)) }
            let deadline = ContinuousClock.now + .seconds(10)
            var summary = ""
            while ContinuousClock.now < deadline {
                summary = await session.summary()
                if summary == "messages [1, 2, 3], ticks 3" { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(summary == "messages [1, 2, 3], ticks 3")

            // Every kind of handler runs isolated, on the actor's loop thread.
            let threads = LoopActorThreads(loop: worker.loop)
            let source = LoopSource(threads.confined { threads in threads.record("source") })
            let observer = LoopObserver(activities: .beforeWaiting, repeats: false,
                                        threads.confined { threads, observer, _ in threads.record("observer") })
            let pipe = TestPipe()
            defer { Glibc.close(pipe.read); Glibc.close(pipe.write) }
            let descriptor = try DescriptorSource(descriptor: pipe.read, events: .readable, threads.confined { threads, source, _ in
                threads.record("descriptor")
                source.invalidate()
            })
            try worker.loop.performAndWait {
                worker.loop.add(source, forMode: .default)
                worker.loop.add(observer, forMode: .default)
                worker.loop.add(descriptor, forMode: .default)
            }
            source.signalAndWakeUp()
            pipe.send("x")
            worker.loop.perform(threads.confined { threads in threads.record("perform") })
            var seen: [String] = []
            while ContinuousClock.now < deadline {
                seen = await threads.seen()
                if seen.count == 4 { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(seen.sorted() == ["descriptor", "observer", "perform", "source"])
            #expect(await threads.allOnLoopThread)
        }

        @Test func A04_aConfinedHandlerCalledOffItsLoopTraps() async {
            await #expect(processExitsWith: .failure) {
                let worker = LoopWorker(name: "a04-trap")
                let session = Session(loop: worker.loop)
                let handler = session.confined { session in session.tally.ticks += 1 }
                handler()  // the test's thread is not the worker's
            }
        }
    }
}

/// Records which handlers ran, and whether each ran on the loop's thread.
actor LoopActorThreads: LoopActor {
    nonisolated let loopExecutor: LoopExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { loopExecutor.asUnownedSerialExecutor() }
    private var names: [String] = []
    private(set) var allOnLoopThread = true

    init(loop: Loop) { loopExecutor = LoopExecutor(loop: loop) }

    func record(_ name: String) {
        names.append(name)
        allOnLoopThread = allOnLoopThread && loop.isCurrent && Loop.current === loop
    }

    func seen() -> [String] { names }
}
