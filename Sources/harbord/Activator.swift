// Harbor — the root side of activation: starts the units harbord asked for, if the policy declares them.
import HarborBootstrap
import HarborPorts
import Logging
import HarborSystem

/// `harbord --activate-pending`, run as root by `harbor-activate.service`
/// when `harbor-activate.path` sees request files (``ActivationRequests``):
/// for each request, named after a unit, it runs
/// `systemctl start --no-block UNIT` if a declaration of the policy file
/// names that unit (`unit=`), refuses it otherwise, and removes the request
/// either way. harbord runs without root and may be compromised: it can
/// only ask for the units the administrator declared, nothing else.
///
/// It repeats until the directory is empty (requests written meanwhile are
/// served by the same run; at most ``maximumRounds`` rounds). The content
/// of a request is never read, and nothing in the directory is followed.
/// Exit status: 0 when every declared unit's start was queued, 1 if a start
/// failed, a request could not be removed or the directory could not be read.
struct Activator {
    /// Rounds of reading the directory before it gives up (a writer faster than the starts).
    static let maximumRounds = 100

    let requests: ActivationRequests
    /// The units the policy file declares; empty if it could not be read.
    let declaredUnits: Set<String>
    /// The program run as `PROGRAM start --no-block UNIT`.
    let program: String
    let logger: Logger

    init(requests: ActivationRequests, policy: BootstrapPolicy, program: String, logger: Logger) {
        self.requests = requests
        declaredUnits = Set(policy.declarations.compactMap(\.unit))
        self.program = program
        self.logger = logger
    }

    /// Serves every waiting request; the exit status.
    func run() -> Int32 {
        var status: Int32 = 0
        for _ in 0..<Self.maximumRounds {
            guard let names = requests.pending() else {
                logger.error("cannot read \(requests.directory)")
                return 1
            }
            if names.isEmpty { return status }
            for name in names where !serve(name) { status = 1 }
        }
        logger.warning("\(requests.directory) still not empty after \(Self.maximumRounds) rounds")
        return status
    }

    /// Starts or refuses one request, then removes it; false on a failure.
    private func serve(_ name: String) -> Bool {
        var served = true
        if declaredUnits.contains(name) {
            served = start(name)
        } else {
            logger.warning("refused \(printable(name)): no declaration of the policy file names this unit")
        }
        if !requests.remove(name) {
            logger.error("cannot remove the request \(requests.directory)/\(printable(name))")
            served = false
        }
        return served
    }

    private func start(_ unit: String) -> Bool {
        let words = [program, "start", "--no-block", unit]
        let pid: Int32
        do {
            pid = try ProcessControl.spawn(program, arguments: words, environment: ProcessControl.environment, searchPath: true)
        } catch {
            logger.error("cannot run \(program) for \(unit): \(error)")
            return false
        }
        let status = ProcessControl.waitForExit(pid)
        if ProcessControl.exitedCleanly(status) {
            logger.info("started \(unit): \(words.joined(separator: " "))")
            return true
        }
        logger.error("\(words.joined(separator: " ")) failed (wait status \(status))")
        return false
    }

    /// A request's name for the log: controls and odd bytes escaped (anyone
    /// who can write the directory chooses it).
    private func printable(_ name: String) -> String {
        var text = ""
        for scalar in name.unicodeScalars.prefix(200) {
            text += scalar.value >= 0x20 && scalar.value < 0x7f ? String(scalar) : "\\u{\(String(scalar.value, radix: 16))}"
        }
        return "\"" + text + "\""
    }
}
