// Harbor — security tests: running harbor-adversary as another uid.
import CHarborLinux
import Glibc
import Harbor
import HarborPorts
import HarborTestSupport
import HarborSystem

/// What one adversary run reported, and how it ended.
struct AdversaryRun: CustomStringConvertible {
    /// Its `key=value` findings (empty if it wrote none).
    let fields: [String: String]
    /// The wait status, or nil if it had to be killed at the deadline.
    let waitStatus: CInt?
    let pid: pid_t

    subscript(key: String) -> String? { fields[key] }
    func int(_ key: String) -> Int? { fields[key].flatMap { Int($0) } }
    /// Whether it exited 0 by itself.
    var finished: Bool { waitStatus.map { $0 & 0x7f == 0 && ($0 >> 8) & 0xff == 0 } ?? false }
    var description: String { fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
}

/// The adversary's uid and gid: nobody.
let adversaryUID: uid_t = 65534

/// Runs `harbor-adversary ATTACK` as `uid` (and gid; 65534 unless told,
/// any number works: setpriv needs no passwd entry) against `victim`, with
/// `arguments`, and waits for it (killing it at `timeout`). Its executable
/// is copied where that uid can run it (the build directory may not be).
func runAdversary(_ attack: String, against victim: Victim, _ arguments: [String] = [],
                  as uid: uid_t = adversaryUID, timeout: Duration = .seconds(120)) throws -> AdversaryRun {
    let scratch = TemporaryDirectory(prefix: "harbor-sec")
    let executable = scratch.copy(builtExecutable("harbor-adversary"), as: "harbor-adversary")
    let out = scratch.writableFile("report")
    let command = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", executable, attack,
                   "--target", victim.kind, "--out", out] + victim.adversaryArguments + arguments
    let child = try ChildProcess.spawn(executable: "/usr/bin/setpriv", arguments: command,
                                       initialMessage: victim.firstMessageForAdversary())
    let pid = child.pid
    let deadline = ContinuousClock.now + timeout
    var status: CInt = 0
    var waited: CInt?
    while waited == nil {
        if waitpid(pid, &status, WNOHANG) == pid {
            waited = status
        } else if ContinuousClock.now > deadline {
            child.kill(SIGKILL)
            waitpid(pid, &status, 0)
            break
        } else {
            usleep(10_000)
        }
    }
    var fields: [String: String] = [:]
    for word in (readSmallFile(out) ?? "").split(whereSeparator: \.isWhitespace) {
        let parts = word.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
    }
    return AdversaryRun(fields: fields, waitStatus: waited, pid: pid)
}
