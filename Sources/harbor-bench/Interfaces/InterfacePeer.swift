// Harbor — the peer process's side of interface-call: an XPC listener and a hosted distributed actor.
import HarborBootstrap
import HarborDistributed
import HarborXPC

/// What the peer serves for `interface-call`, beside the raw jobs its main
/// thread runs: an `XPCListener` checked in as ``xpcName`` (its sessions run
/// on threads of their own) and a `BenchEcho` actor registered as
/// ``actorName`` (its system's thread receives the calls).
final class InterfacePeer {
    static let xpcName = "bench.interface.xpc"
    static let actorName = "bench.interface.actor"
    let listener: XPCListener
    let system: HarborActorSystem
    let actor: BenchEcho

    /// Starts both on the harbord at `socketPath`.
    init(socketPath: String) throws {
        listener = try XPCListener(service: Self.xpcName, bootstrap: try BootstrapClient(socketPath: socketPath)) {
            request in
            request.accept { message in
                guard let call = try? message.decode(as: EchoCall.self) else { return nil }
                return call
            }
        }
        system = try HarborActorSystem(bootstrap: try BootstrapClient(socketPath: socketPath))
        actor = BenchEcho(actorSystem: system)
        try system.serve(actor, as: Self.actorName)
    }
}
