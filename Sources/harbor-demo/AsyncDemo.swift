// Harbor — the demo's async part: an actor whose executor is a run-loop thread receives port messages (A01, A02).
import Dispatch
import Glibc
import Harbor

/// An actor confined to a Harbor loop thread: its isolated code runs there,
/// between the loop's other work, so its state needs no lock.
actor Mailbox {
    let executor: LoopExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private var delivered = 0

    init(loop: Loop) { executor = LoopExecutor(loop: loop) }

    /// Reads `count` messages from the port, reporting each one.
    func receive(_ count: Int, from messages: PortMessages) async throws {
        for try await message in messages {
            delivered += 1
            print("  actor got message \(message.id) \"\(message.text)\" on the loop thread: \(executor.loop.isCurrent)")
            if delivered == count { return }
        }
    }
}

/// The async part of the demo: a worker loop thread, an actor running on
/// it, and a port whose messages the actor awaits with `for try await`
/// (no thread parked per port: one shared Harbor thread watches ports).
///
/// Call from async code: `try await runAsyncDemo()`; from synchronous
/// top-level code use ``runAsyncDemoAndWait()``.
func runAsyncDemo() async throws {
    print("async: an actor on a run-loop thread receives port messages")
    let worker = LoopWorker(name: "demo.actor")
    let mailbox = Mailbox(loop: worker.loop)
    let messages = try ReceiveRight().messages()
    let sender = messages.makeSendRight()
    let words = ["hello", "from", "a", "port"]
    let receiving = Task { try await mailbox.receive(words.count, from: messages) }
    for (index, word) in words.enumerated() {
        try sender.send(Message(id: Int32(index + 1), text: word))
    }
    try await receiving.value
    print("  \(words.count) messages delivered; stopping the loop thread")
    worker.stop()
}

/// Runs ``runAsyncDemo()`` from synchronous code (top-level `main.swift`)
/// and waits for it. Do not call it from the main actor's own executor.
func runAsyncDemoAndWait() throws {
    final class Outcome: @unchecked Sendable {
        // @unchecked: written by the task before `done.signal()`, read after `done.wait()`.
        var error: (any Error)?
    }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await runAsyncDemo() } catch { outcome.error = error }
        done.signal()
    }
    done.wait()
    if let error = outcome.error { throw error }
}
