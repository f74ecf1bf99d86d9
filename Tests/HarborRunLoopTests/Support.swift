// Harbor — helpers for the run-loop tests: fresh threads, event logs, gates.
import Glibc
import HarborPorts
import HarborRunLoop
import HarborTestSupport
import Testing

/// Every run-loop suite nests in here, so they run one at a time and the
/// process-wide descriptor count means something in each of them.
@Suite(.serialized) struct RunLoopTests {}

/// An ordered log of what happened, written from any thread.
final class EventLog: Sendable {
    private let entries = HarborLock<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
    func count(of entry: String) -> Int { all.filter { $0 == entry }.count }
}

/// A one-shot gate: `open()` from any thread, `wait()` blocks until opened.
/// Built on an eventfd-free pthread condition so tests never sleep to sync.
final class Gate: @unchecked Sendable {
    // @unchecked: `opened` is guarded by `mutex`.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var opened = false
    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }
    func open() {
        pthread_mutex_lock(&mutex)
        opened = true
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
    }
    func wait() {
        pthread_mutex_lock(&mutex)
        while !opened { pthread_cond_wait(&condition, &mutex) }
        pthread_mutex_unlock(&mutex)
    }
}

private final class Box<T>: @unchecked Sendable {
    // @unchecked: written by the thread before it exits, read after pthread_join.
    var body: (() -> T)?
    var result: T?
    init(_ body: @escaping () -> T) { self.body = body }
    func run() {
        result = body?()
        body = nil
    }
}

/// Runs `body` on a brand-new thread and returns its result after the thread
/// has exited (so its loop, if it made one, is already torn down).
func onFreshThread<T>(_ body: @escaping () -> T) -> T {
    let box = Box(body)
    Background { box.run() }.join()
    return box.result!
}

/// Starts `body` on a new thread now; `join()` waits for it.
final class Background: @unchecked Sendable {
    // @unchecked: `handle` is written once in init, read in join.
    private var handle = pthread_t()
    init(_ body: @escaping @Sendable () -> Void) {
        final class Run: Sendable { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let context = Unmanaged.passRetained(Run(body)).toOpaque()
        pthread_create(&handle, nil, { context in
            Unmanaged<Run>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    }
    func join() { pthread_join(handle, nil) }
}


/// Milliseconds since an instant, for loose timing assertions.
func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}
