// HarborDistributed — what a system's lock guards.
import HarborBootstrap
import HarborCoding
import HarborPorts

/// A ``HarborActorSystem``'s tables, under its lock.
struct SystemState: Sendable {
    /// The actors this system hosts, by port.
    var hosted: [PortName: HostedActor] = [:]
    /// Names checked in for local actors, by name.
    var checkedIn: [String: CheckedInName] = [:]
    /// The actor's own port for each checked-in name's port: calls
    /// arriving at the name's port go to that actor.
    var aliases: [PortName: PortName] = [:]
    /// Calls waiting for an answer, by reply port.
    var pending: [PortName: PendingCall] = [:]
    /// Calls by number waiting for an answer, by number (D08).
    var numbered: [UInt64: NumberedCall] = [:]
    /// The serving side: the calls running, by calling process and call
    /// number, so their callers can cancel them (D11).
    var running: [RunningCallKey: RunningCall] = [:]
    /// The caller's links, by serving process (D08).
    var links: [Int32: ReplyLink] = [:]
    /// The serving process of each link's reply port.
    var linkPorts: [PortName: Int32] = [:]
    /// What a first call taught about each remote actor's port (D08).
    var routes: [PortName: RemoteActorRoute] = [:]
    /// The serving side: the reply ports of the callers' links (D08).
    var callers: [CallerKey: CallerLink] = [:]
    /// The caller link each kept reply right's port belongs to.
    var callerPorts: [PortName: CallerKey] = [:]
    /// Error types rethrown as themselves, by mangled name.
    var errorTypes: [String: ErrorRebuilder] = [:]
    /// The coders' `userInfo` (`HarborActorSystem.codingUserInfo`), made
    /// once; it holds the system, so `shutdown()` lets go of it.
    var codingUserInfo: [CodingUserInfoKey: any Sendable]?
    /// The name server client, once needed.
    var bootstrap: BootstrapClient?
    /// Set by `shutdown()`.
    var stopped = false
}
