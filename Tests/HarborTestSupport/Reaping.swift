// Harbor — test support: reaping a child within a bound, whatever it does.
import Glibc

/// Waits up to `patience` for child `pid` to exit; if it has not, SIGKILLs
/// it and waits for that (a killed process exits at once). Returns its wait
/// status (0 if it was reaped already). Never waits without a bound on a
/// child that does not exit by itself, as `waitpid(pid, 0)` does.
@discardableResult
public func reapChild(_ pid: pid_t, patience: Duration = .seconds(10)) -> CInt {
    let deadline = ContinuousClock.now + patience
    var status: CInt = 0
    while true {
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { return status }
        if reaped < 0 && errno != EINTR { return 0 }  // ECHILD: reaped already
        if ContinuousClock.now >= deadline { break }
        usleep(5_000)
    }
    kill(pid, SIGKILL)
    while waitpid(pid, &status, 0) < 0 {
        if errno != EINTR { return 0 }
    }
    return status
}
