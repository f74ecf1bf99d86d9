// Harbor — one ActorCall measure's samples, handed from its task to the waiting thread.

/// One measure's samples, written by its task and read after the task signalled.
final class ActorBatch: @unchecked Sendable {
    // @unchecked: written by one task, read by the waiting thread after the semaphore.
    var samples: [Int64] = []
    var failure: (any Error)?
}
