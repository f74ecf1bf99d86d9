// Harbor — what `harbor monitor` and `harbor capture` both take: the name, whose it is, and when to stop.
import ArgumentParser
import HarborBootstrap

/// The options `monitor` and `capture` share.
struct MonitorOptions: ParsableArguments {
    @Argument(help: "The service name.") var name: String
    @Option(name: .long, help: "The uid whose name it is (root: any uid's).") var uid: UInt32?
    @Option(name: [.short, .long], help: "Exit 0 after this many messages.") var count: Int?
    @Option(name: .long, help: ArgumentHelp("Exit 0 after this many seconds.", valueName: "seconds"))
    var seconds: Double?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let seconds, !(seconds > 0 && seconds <= 86_400 * 365) { throw ValidationError("--seconds must be positive") }
    }

    /// Reaches the holder of the name through `client` (exit statuses as `harbor --help` says).
    func stream(bodyPrefix: Int, client: BootstrapClient) throws(CommandFailure) -> MonitorStream {
        try MonitorStream(name: name, uid: uid, bodyPrefix: bodyPrefix, client: client)
    }
}
