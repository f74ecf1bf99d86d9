// Harbor — POSIX threads: the one place a thread is started, joined or named.
//
// Every thread Harbor, its tools and its tests start comes through
// `SystemThread.start`, so the closure-boxing trampoline `pthread_create`
// needs is written once.
import CHarborLinux
import Glibc

/// A POSIX thread: a handle that is joined or detached once by its owner.
///
/// ```swift
/// let worker = SystemThread.start { work() }
/// worker.join()
/// ```
///
/// **Thread safety:** a value; `join` and `detach` are each for one caller,
/// once (as `pthread_join` and `pthread_detach` are).
package struct SystemThread: Hashable, Sendable {
    private let handle: pthread_t

    private init(handle: pthread_t) { self.handle = handle }

    /// Starts `body` on a new thread. C: `pthread_create`.
    /// - Throws: the error `pthread_create` returned (EAGAIN: out of threads).
    package static func spawn(_ body: @escaping @Sendable () -> Void) throws(SystemError) -> SystemThread {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { context in
            Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            throw SystemError(errno: result, call: "pthread_create")
        }
        return SystemThread(handle: handle)
    }

    /// Like ``spawn(_:)``, for callers with no way on without the thread
    /// (a worker loop, a test): a failure traps, naming the error.
    @discardableResult
    package static func start(_ body: @escaping @Sendable () -> Void) -> SystemThread {
        do {
            return try spawn(body)
        } catch {
            preconditionFailure("Harbor: cannot start a thread: \(error)")
        }
    }

    /// The calling thread. C: `pthread_self`.
    package static var current: SystemThread { SystemThread(handle: pthread_self()) }

    /// Whether this is the calling thread. C: `pthread_equal`.
    package var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// The handle as a number, for an atomic that records an owner thread
    /// (never 0 for a running thread).
    package var id: UInt { UInt(handle) }

    /// Waits for the thread to exit. C: `pthread_join`.
    package func join() { _ = pthread_join(handle, nil) }

    /// Lets the thread end on its own; its handle is not used again. C: `pthread_detach`.
    package func detach() { _ = pthread_detach(handle) }

    /// The longest thread name the kernel keeps, in bytes (`TASK_COMM_LEN`
    /// less its terminating zero).
    package static let nameLimit = 15

    /// Names the calling thread as `ps -L`, `top -H`, `perf` and
    /// `/proc/PID/task/TID/comm` show it: `name`'s first
    /// ``nameLimit`` bytes, cut at a character boundary. A thread starts
    /// with its creator's name (on Linux a new thread copies it), so a
    /// thread started from a pool thread would otherwise carry the pool's.
    /// C: `pthread_setname_np`.
    package static func nameCurrent(_ name: String) {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= nameLimit else { break }
            kept.append(character)
        }
        _ = charbor_name_thread(kept)
    }

    /// The kernel's id of the calling thread (the process id on the main thread).
    package static var kernelID: Int32 { charbor_gettid() }

    /// Whether the calling thread is the process's main thread.
    package static var isMainThread: Bool { charbor_gettid() == getpid() }
}

/// The closure a new thread runs, boxed to cross `pthread_create`.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// A pointer-sized value per thread, with a destructor run when a thread
/// that set one exits. C: `pthread_key_create`, `pthread_getspecific`,
/// `pthread_setspecific`.
///
/// **Thread safety:** any thread; each thread sees its own value.
package struct ThreadLocalKey: Sendable {
    private let key: pthread_key_t

    /// A new key; `destructor` gets each exiting thread's non-nil value.
    /// Keys are few (PTHREAD_KEYS_MAX): make them once, globally.
    package init(destructor: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Void) {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, destructor)
        precondition(result == 0, "Harbor: pthread_key_create failed (\(result))")
        self.key = key
    }

    /// The calling thread's value (nil until it set one).
    package var value: UnsafeMutableRawPointer? { pthread_getspecific(key) }

    /// Sets the calling thread's value.
    package func set(_ value: UnsafeMutableRawPointer?) { _ = pthread_setspecific(key, value) }
}
