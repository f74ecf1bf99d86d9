// Harbor — Swift concurrency: a port's messages as an AsyncSequence (A01), actors on a loop thread (A02).
import Glibc
import HarborPorts
@testable import HarborRunLoop
import HarborTestSupport
import Testing

/// An actor whose isolated code runs on a Harbor loop's thread.
actor LoopBound {
    let executor: LoopExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private var received: [Int32] = []

    init(loop: Loop) { executor = LoopExecutor(loop: loop) }

    /// Whether isolated code is running on the loop's own thread.
    func isOnLoopThread() -> Bool { executor.loop.isCurrent && Loop.current === executor.loop }

    /// Consumes `count` messages; records whether each arrived on the loop thread.
    func consume(_ messages: PortMessages, count: Int) async throws -> (ids: [Int32], allOnLoopThread: Bool) {
        var onThread = true
        for try await message in messages {
            onThread = onThread && executor.loop.isCurrent
            received.append(message.id)
            if received.count == count { break }
        }
        return (received, onThread)
    }
}

extension RunLoopTests {
    @Suite struct ConcurrencyTests {
        init() {
            // The shared watcher thread lives for the whole process: start it
            // before counting descriptors.
            _ = AsyncPortWatcher.loop
        }

        @Test func A01_portMessagesAsAnAsyncSequence() async throws {
            let before = openDescriptorCount()
            do {
                let messages = try ReceiveRight().messages()
                let sender = messages.makeSendRight()
                // One queued before iterating (taken at once), two sent while waiting.
                try sender.send(Message(id: 1, text: "one"))
                let consumer = Task { () throws -> [String] in
                    var seen: [String] = []
                    for try await message in messages {
                        seen.append("\(message.id) \(message.text)")
                        if seen.count == 3 { break }
                    }
                    return seen
                }
                try sender.send(Message(id: 2, text: "two"))
                try sender.send(Message(id: 3, text: "three"))
                #expect(try await consumer.value == ["1 one", "2 two", "3 three"])
                #expect(!messages.isWatched)
            }
            #expect(openDescriptorCount() == before)
        }

        @Test func A01_manyAwaitedPortsParkNoThreadEach() async throws {
            let ports = 200
            let threadsBefore = processThreadCount()
            let streams = try (0..<ports).map { _ in try ReceiveRight().messages() }
            try await withThrowingTaskGroup(of: Int32.self) { group in
                for stream in streams {
                    group.addTask {
                        var iterator = stream.makeAsyncIterator()
                        return try await iterator.next()?.id ?? -1
                    }
                }
                // Wait until every task is parked on its port in the shared loop.
                while streams.contains(where: { !$0.isWatched }) { await Task.yield() }
                // 200 awaiting ports, and the process has not grown a thread per port.
                let threadsWaiting = processThreadCount()
                #expect(threadsWaiting - threadsBefore < 10, "\(threadsWaiting - threadsBefore) new threads for \(ports) ports")
                for (index, stream) in streams.enumerated() { try stream.makeSendRight().send(Message(id: Int32(index))) }
                var ids: [Int32] = []
                for try await id in group { ids.append(id) }
                #expect(ids.sorted() == (0..<Int32(ports)).map { $0 })
            }
        }

        @Test func A01_cancellingAWaitEndsItAndLeavesNothingBehind() async throws {
            let before = openDescriptorCount()
            do {
                let messages = try ReceiveRight().messages()
                let waiting = Task { () throws(CancellationError) -> ReceivedMessage? in
                    var iterator = messages.makeAsyncIterator()
                    return try await iterator.next()
                }
                while !messages.isWatched { await Task.yield() }
                waiting.cancel()
                let outcome = await waiting.result
                #expect(throws: CancellationError.self) { try outcome.get() }
                // The port left the shared loop, and still works afterwards.
                #expect(!messages.isWatched)
                try messages.makeSendRight().send(Message(id: 9))
                var iterator = messages.makeAsyncIterator()
                #expect(try await iterator.next()?.id == 9)
                // A task cancelled before it waits never registers.
                let early = Task { () throws(CancellationError) -> ReceivedMessage? in
                    withUnsafeCurrentTask { $0?.cancel() }
                    var iterator = messages.makeAsyncIterator()
                    return try await iterator.next()
                }
                let earlyOutcome = await early.result
                #expect(throws: CancellationError.self) { try earlyOutcome.get() }
                #expect(!messages.isWatched)
            }
            // The port, its readiness eventfd and the watch are all gone.
            #expect(openDescriptorCount() == before)
            #expect(AsyncPortWatcher.loop.state.withLock { $0.waitSlots.occupiedCount } == 0)
        }

        @Test func A02_anActorOnALoopThreadRunsItsIsolatedCodeThere() async throws {
            let worker = LoopWorker(name: "a02")
            let bound = LoopBound(loop: worker.loop)
            #expect(await bound.isOnLoopThread())
            // The loop still serves its own sources between the actor's jobs.
            let log = EventLog()
            try worker.loop.performAndWait { log.append("loop work") }
            #expect(await bound.isOnLoopThread())
            #expect(log.all == ["loop work"])
            // A01 + A02: the actor consumes a port's messages on its loop thread.
            let messages = try ReceiveRight().messages()
            let sender = messages.makeSendRight()
            let consuming = Task { try await bound.consume(messages, count: 3) }
            for id in Int32(1)...3 { try sender.send(Message(id: id)) }
            let result = try await consuming.value
            #expect(result.ids == [1, 2, 3])
            #expect(result.allOnLoopThread)
            worker.stop()
        }
    }
}
