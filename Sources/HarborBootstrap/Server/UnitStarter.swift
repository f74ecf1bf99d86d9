// Harbor — socket activation of a declared service: asking systemd to start its unit.
import HarborPorts
import HarborRunLoop

/// Starts the systemd unit of a declared name whose service is not running,
/// by running `systemctl start --no-block UNIT` (the program can be
/// replaced, for tests). `--no-block` queues the job and returns, so the
/// look-up that caused it is answered at once; the messages it sends wait
/// in the port until the service checks in.
///
/// Without systemd (no `/run/systemd/system`) and no replacement program,
/// nothing is started and the look-up says so in the log.
///
/// **Cost:** one `posix_spawn` per activation, reaped through a pidfd on the
/// server's loop (no thread).
struct UnitStarter: Sendable {
    /// The program to run, or nil when there is no service manager.
    let program: String?

    /// `override` if given, else `systemctl` when systemd is running.
    init(override: String?) {
        if let override {
            program = override
        } else {
            program = FileSystem.exists("/run/systemd/system") ? "systemctl" : nil
        }
    }

    /// Runs `PROGRAM start --no-block UNIT`; `finished` gets a one-line
    /// outcome on the loop's thread when it exits.
    func start(_ unit: String, loop: Loop, mode: LoopMode, finished: @escaping @Sendable (Bool, String) -> Void) -> Bool {
        guard let program else { return false }
        let words: [String] = [program, "start", "--no-block", unit]
        let pid: Int32
        do {
            pid = try ProcessControl.spawn(
                program, arguments: words, environment: ProcessControl.environment, searchPath: true)
        } catch {
            finished(false, "cannot run \(program): \(SystemError.reason(error.code))")
            return true
        }
        guard let pidfd = try? ProcessControl.openDescriptor(pid) else {
            // No pidfd (old kernel): reap when the next child is reaped; report at once.
            finished(true, "\(program) start --no-block \(unit) started (pid \(pid))")
            return true
        }
        let reaper = Reaper()
        reaper.watch = DescriptorWatch(pidfd, loop: loop, mode: mode, label: "reap \(program)") {
            guard let wait = ProcessControl.reapIfExited(pid) else { return }
            reaper.watch?.invalidate()
            reaper.watch = nil
            DescriptorIO.close(pidfd)
            let exited = (wait & 0x7f) == 0
            let code = (wait >> 8) & 0xff
            if exited && code == 0 {
                finished(true, "\(program) start --no-block \(unit): done")
            } else {
                finished(false, "\(program) start --no-block \(unit) failed (" + (exited ? "exit \(code)" : "signal \(wait & 0x7f)") + ")")
            }
        }
        if reaper.watch == nil { DescriptorIO.close(pidfd) }
        return true
    }
}

/// Keeps a reaping watch alive until its child exits.
private final class Reaper: @unchecked Sendable {
    // @unchecked: used only on the server loop's thread.
    var watch: DescriptorWatch?
}
