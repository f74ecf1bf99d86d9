// Harbor — helpers for the systemd tests: fresh threads, a NOTIFY_SOCKET harness, child processes.
import CHarborLinux
import Glibc
import HarborTestSupport
import Synchronization
import Testing

/// Every systemd suite nests in here, so they run one at a time and the
/// process-wide descriptor count means something in each of them.
@Suite(.serialized) struct SystemdTests {}

/// An ordered log of (milliseconds since start, event), written from any thread.
final class TimedLog: Sendable {
    private let start = ContinuousClock.now
    private let entries = Mutex<[Entry]>([])
    struct Entry: Sendable {
        var ms: Double
        var event: String
    }
    func record(_ event: String) {
        let ms = Double((ContinuousClock.now - start) / .microseconds(1)) / 1000
        entries.withLock { $0.append(Entry(ms: ms, event: event)) }
    }
    var all: [Entry] { entries.withLock { $0 } }
    func times(of event: String) -> [Double] { all.filter { $0.event == event }.map(\.ms) }
    func count(of event: String) -> Int { all.filter { $0.event == event }.count }
    var events: [String] { all.map(\.event) }
}

private protocol Runnable: AnyObject { func runBody() }

private final class ThreadBox<T>: Runnable, @unchecked Sendable {
    // @unchecked: written by the thread before it exits, read after pthread_join.
    var body: (() -> T)?
    var result: T?
    init(_ body: @escaping () -> T) { self.body = body }
    func runBody() {
        result = body?()
        body = nil
    }
}

/// Runs `body` on a brand-new pthread and returns its result after the
/// thread has exited (its Harbor loop, if any, torn down).
func onFreshThread<T>(_ body: @escaping () -> T) -> T {
    let box = ThreadBox(body)
    var thread = pthread_t()
    let retained = Unmanaged.passRetained(box as AnyObject).toOpaque()
    let created = pthread_create(&thread, nil, { raw in
        let object = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue()
        (object as! any Runnable).runBody()
        return nil
    }, retained)
    precondition(created == 0, "pthread_create failed")
    pthread_join(thread, nil)
    return box.result!
}

/// A child process started with an explicit environment; its stderr can be captured.
final class Child {
    let pid: pid_t
    private let pidDescriptor: CInt
    /// Read end of the child's stderr, or -1.
    let stderrDescriptor: CInt
    private(set) var exitStatus: CInt?

    init(_ arguments: [String], environment: [String], captureStderr: Bool = false) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        var pipeEnds: [CInt] = [-1, -1]
        if captureStderr {
            _ = pipe(&pipeEnds)
            _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        var child: pid_t = 0
        let spawned = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        precondition(spawned == 0, "posix_spawn \(arguments[0]) failed: \(spawned)")
        for pointer in argv + envp { free(pointer) }
        posix_spawn_file_actions_destroy(&actions)
        if captureStderr { close(pipeEnds[1]) }
        stderrDescriptor = pipeEnds[0]
        pid = child
        pidDescriptor = charbor_pidfd_open(child, 0)
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            waitForExit(before: .now + .seconds(5))
        }
        close(pidDescriptor)
        if stderrDescriptor >= 0 { close(stderrDescriptor) }
    }

    /// Waits (on its pidfd, no polling) for the child to exit; its wait
    /// status, or nil at the deadline.
    @discardableResult
    func waitForExit(before deadline: ContinuousClock.Instant) -> CInt? {
        if let exitStatus { return exitStatus }
        var probe = pollfd(fd: pidDescriptor, events: Int16(POLLIN), revents: 0)
        let ms = max(0, Int32(ContinuousClock.now.duration(to: deadline) / .milliseconds(1)))
        guard poll(&probe, 1, ms) > 0 else { return nil }
        var status: CInt = 0
        waitpid(pid, &status, 0)
        exitStatus = status
        return status
    }

    /// Reads the child's stderr until `text` shows up or the deadline.
    func waitForStderr(containing text: String, before deadline: ContinuousClock.Instant) -> Bool {
        var seen = ""
        while !seen.contains(text) {
            var probe = pollfd(fd: stderrDescriptor, events: Int16(POLLIN), revents: 0)
            let ms = max(0, Int32(ContinuousClock.now.duration(to: deadline) / .milliseconds(1)))
            guard poll(&probe, 1, ms) > 0 else { return false }
            var chunk = [UInt8](repeating: 0, count: 512)
            let count = read(stderrDescriptor, &chunk, chunk.count)
            guard count > 0 else { return false }
            seen += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        return true
    }
}

/// The probe executable, built beside the test bundle.
func probePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe = String(decoding: buffer[0..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let directory = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    return directory + "/harbor-notify-probe"
}

/// PATH and HOME of this process, for children.
func baseEnvironment() -> [String] {
    let names: [String] = ["PATH", "HOME"]
    return names.compactMap { name -> String? in
        guard let value = getenv(name) else { return nil }
        return "\(name)=\(String(cString: value))"
    }
}

/// A mutable value shared by closures that all run on one thread.
final class Cell<Value>: @unchecked Sendable {
    // @unchecked: every test uses a Cell on one thread only (the loop's).
    var value: Value
    init(_ value: Value) { self.value = value }
}
