// Harbor — socket activation of a declared service: asking systemd to start its unit.
import HarborPorts
import HarborRunLoop
import HarborSystem

/// Starts the systemd unit of a declared name whose service is not running,
/// by one of three means, chosen when the server starts (after harbord gave
/// up root, so it knows what it may do):
///
/// 1. a replacement program (`--unit-starter`, for tests): `PROGRAM start --no-block UNIT`;
/// 2. a request file (``ActivationRequests``) when `/run/harbor/activate`
///    exists and this process may write in it: under the shipped units,
///    harbord runs without root and `harbor-activate.service` starts the
///    unit if the policy file declares it;
/// 3. `systemctl start --no-block UNIT` when systemd runs (`/run/systemd/system`),
///    which needs root (as a harbord run by hand with `--user root`);
///
/// and otherwise not at all: the look-up says so in the log. Either way the
/// look-up that caused it is answered at once; the messages it sends wait
/// in the port until the service checks in.
///
/// **Cost:** a request file: one `open` and `close`. A program: one
/// `posix_spawn`, reaped through a pidfd on the server's loop (no thread).
struct UnitStarter: Sendable {
    /// How units are started.
    enum Mechanism: Sendable, Hashable {
        /// Run this program as `PROGRAM start --no-block UNIT`.
        case program(String)
        /// Write a request file for the root activator.
        case requestFiles(ActivationRequests)
        /// No service manager: units are not started.
        case none
    }

    let mechanism: Mechanism

    /// Starts units by `mechanism`.
    init(mechanism: Mechanism) { self.mechanism = mechanism }

    /// `override` if given; else request files if their directory is
    /// writable here; else `systemctl` when systemd is running.
    init(override: String?, requests: ActivationRequests = ActivationRequests()) {
        if let override {
            mechanism = .program(override)
        } else if requests.isWritable {
            mechanism = .requestFiles(requests)
        } else if FileSystem.exists("/run/systemd/system") {
            mechanism = .program("systemctl")
        } else {
            mechanism = .none
        }
    }

    /// What the start-up log line says about activation.
    var summary: String {
        switch mechanism {
        case .program(let program): "look-ups start units with \(program) start --no-block UNIT"
        case .requestFiles(let requests): "look-ups start units through request files in \(requests.directory) (harbor-activate.path)"
        case .none: "no systemd: look-ups will not start units"
        }
    }

    /// Starts `unit` by the chosen means; `finished` gets a one-line outcome
    /// on the loop's thread (for a program, when it exits). False if there
    /// is no means (``Mechanism/none``).
    func start(_ unit: String, loop: Loop, mode: LoopMode, finished: @escaping @Sendable (Bool, String) -> Void) -> Bool {
        let program: String
        switch mechanism {
        case .none:
            return false
        case .requestFiles(let requests):
            do {
                try requests.request(unit)
                finished(true, "requested in \(requests.directory) (harbor-activate.service starts it)")
            } catch {
                finished(false, "cannot write a request in \(requests.directory): \(SystemError.reason(error.code))")
            }
            return true
        case .program(let name):
            program = name
        }
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
