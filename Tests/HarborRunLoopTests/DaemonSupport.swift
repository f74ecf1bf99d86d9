// Harbor — helpers for the daemon-shaped tests: pipes, child processes, error codes, thread counts.
import CHarborLinux
import Glibc
@testable import HarborRunLoop

/// The code of the `SourceError` `body` throws, or nil if it throws nothing (or something else).
func sourceErrorCode(_ body: () throws -> Void) -> SourceError.Code? {
    do {
        try body()
        return nil
    } catch let error as SourceError {
        return error.code
    } catch {
        return nil
    }
}

/// A pipe's two ends; close them with `close()`.
struct TestPipe {
    let read: CInt
    let write: CInt
    init() {
        var ends: [CInt] = [0, 0]
        precondition(pipe(&ends) == 0)
        for end in ends {
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        read = ends[0]
        write = ends[1]
    }
    func send(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(write, &bytes, bytes.count)
    }
    func receive() -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(read, &buffer, buffer.count)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    }
}

/// Spawns `arguments` (argv[0] a path); returns its pid.
func spawnChild(_ arguments: [String]) -> pid_t? {
    var pid: pid_t = 0
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    return posix_spawn(&pid, arguments[0], nil, nil, argv, environ) == 0 ? pid : nil
}

/// How many threads this process has (the `Threads:` line of /proc/self/status).
func processThreadCount() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, CInt(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("Threads:") {
            return Int(text.dropFirst(8).filter { $0.isNumber }) ?? -1
        }
    }
    return -1
}
