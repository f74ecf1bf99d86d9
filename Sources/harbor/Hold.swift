// Harbor — `harbor hold`: check names in and keep them, a placeholder service.
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborPorts

struct Hold: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold",
        abstract: "Check names in and hold them until interrupted.",
        discussion: """
            Takes each name's receive right and keeps it, reading nothing: messages sent to the names \
            wait in their ports (up to their queue limits). Prints "holding N names" once all are \
            checked in. If harbord restarts, the names are checked in again by themselves. A placeholder \
            service, and a way to load a name server. With --json: one object {"holding", "names"} once \
            all are checked in (Docs/schemas/harbor-hold.schema.json). \
            Exit status 0 when interrupted (SIGINT, SIGTERM, SIGHUP) or after --seconds, 1 refused \
            (a name is held already), 3 name server unreachable, 4 no answer in time, 5 not permitted, \
            6 over your uid's quota.
            """)

    @Argument(help: "The names to check in.") var names: [String]
    @Option(name: .long, help: ArgumentHelp(
        "Check in NAME.1 … NAME.N for each NAME given, instead of the names themselves.", valueName: "N"))
    var count: Int?
    @Option(name: .long, help: ArgumentHelp("Exit 0 after this many seconds.", valueName: "seconds"))
    var seconds: Double?
    @OptionGroup var connection: ConnectionOptions
    @Flag(name: .long, help: "Print one JSON object once checked in (Docs/schemas/harbor-hold.schema.json).")
    var json = false

    func validate() throws {
        guard !names.isEmpty else { throw ValidationError("give at least one name") }
        if let seconds, !(seconds > 0 && seconds <= 86_400 * 365) { throw ValidationError("--seconds must be positive") }
        if let count, !(1...1_000_000).contains(count) { throw ValidationError("--count must be between 1 and 1000000") }
    }

    /// The names to check in, with `--count` expanded.
    private var expanded: [String] {
        guard let count else { return names }
        return names.flatMap { name in (1...count).map { "\(name).\($0)" } }
    }

    func run() throws {
        let client = try connection.connect()
        var held: [HeldPort] = []
        for name in expanded {
            do throws(BootstrapError) { held.append(HeldPort(try client.checkIn(name))) } catch {
                throw CommandFailure(error, name: name)
            }
        }
        if json {
            say(JSONText.object([("holding", String(held.count)),
                                 ("names", "[" + expanded.map(JSONText.string).joined(separator: ",") + "]")]))
        } else {
            say("holding \(held.count) name\(held.count == 1 ? "" : "s")")
        }
        // Wait for SIGINT, SIGTERM or SIGHUP (taken even where a parent left
        // them blocked), or the time given; then let go of the names and exit 0.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        if let seconds {
            var wait = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
            while sigtimedwait(&signals, nil, &wait) < 0 && errno == EINTR {}
        } else {
            var caught: CInt = 0
            sigwait(&signals, &caught)
        }
        withExtendedLifetime(client) {}
        held.removeAll()
    }
}

/// A receive right kept alive (an array cannot hold `~Copyable` values).
final class HeldPort {
    let port: ReceiveRight
    init(_ port: consuming ReceiveRight) { self.port = port }
}
