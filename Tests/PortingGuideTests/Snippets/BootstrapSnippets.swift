// Harbor — Porting.md's name-server snippet: bootstrap_check_in and bootstrap_look_up.
import Harbor
import HarborBootstrap

extension Snippets {
    /// A service checks in, a client looks it up. `socketPath` is the test's
    /// own name server; real code writes `BootstrapClient()`, which finds harbord.
    static func bootstrap(socketPath: String, print: @escaping @Sendable (String) -> Void) throws {
        // snippet: bootstrap
        let bootstrap = try BootstrapClient(socketPath: socketPath)       // bootstrap_port (BootstrapClient() finds harbord)
        let inbox = try bootstrap.checkIn("com.example.echo")             // bootstrap_check_in(bootstrap_port, name, &port)
        let echo = try bootstrap.lookUp("com.example.echo")               // bootstrap_look_up(bootstrap_port, name, &port)
        try echo.send(Message(id: 1, text: "hello"))
        let message = try inbox.receive(timeout: .seconds(1))
        print("the checked-in port got: \(message.text)")
        do {
            _ = try bootstrap.lookUp("com.example.missing")
        } catch {
            print("missing: \(error.code)")                                // BOOTSTRAP_UNKNOWN_SERVICE
        }
        // end snippet
    }
}
