// Harbor — what every seed experiment provides, and small helpers they share.
import Glibc
import Harbor
import Synchronization

/// One experiment from a seed article.
protocol Experiment {
    /// The name `harbor-seeds <name>` takes.
    static var name: String { get }
    static var summary: String { get }
    /// Which seed, and which section of it.
    static var article: String { get }
    /// What the article says should happen, in words.
    static var expected: String { get }
    /// Runs the experiment and returns its event log.
    static func run() -> [String]
    /// Whether `log` is what the article predicts.
    static func matches(_ log: [String]) -> Bool
}

/// An ordered log written from any thread.
final class Log: Sendable {
    private let lines = Mutex<[String]>([])
    func callAsFunction(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A one-shot gate: `open()` from any thread, `wait()` blocks until opened.
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

/// Hands a value from one thread to another.
final class Handoff<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let gate = Gate()
    func put(_ new: Value) { value.withLock { $0 = new }; gate.open() }
    func take() -> Value { gate.wait(); return value.withLock { $0! } }
}

/// A thread started now; `join()` waits for it to exit.
final class Background: @unchecked Sendable {
    // @unchecked: `handle` is written once in init and read in join.
    private var handle = pthread_t()
    init(_ body: @escaping @Sendable () -> Void) {
        final class Run: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Run(body)).toOpaque()
        pthread_create(&handle, nil, { context in
            Unmanaged<Run>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    }
    func join() { pthread_join(handle, nil) }
}

/// Runs `body` on a new thread and waits for it to exit.
func onNewThread(_ body: @escaping @Sendable () -> Void) { Background(body).join() }

extension String {
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}

/// A port source holding a fresh port. An experiment cannot go on without
/// one, so failing to make it (the process is out of descriptors) ends the
/// program with the reason rather than a trap.
func makePortSource(_ handler: @escaping @Sendable (consuming Message) -> Void = { _ in }) -> PortSource {
    do {
        return try PortSource(ReceiveRight(), handler)
    } catch {
        print("harbor-seeds: cannot make a port source: \(error)")
        exit(1)
    }
}
