// Harbor — starting a process with its first message (and so its first rights).
import Glibc  // types only: pid_t
import HarborSystem
import HarborPorts

/// A child process started by Harbor, holding its first message.
///
/// Before any name server exists, a process needs one right to start
/// talking. ``spawn(executable:arguments:keeping:initialMessage:)`` gives the child
/// one end of a socket pair, inherited as a descriptor named by the
/// environment variable ``environmentKey``, and sends `initialMessage` (with
/// whatever rights it carries) down it. The child calls
/// `Message/receiveInitial(timeout:)` once to get it. No API turns a raw
/// descriptor number into a right: the child only decodes a Harbor packet
/// from the descriptor its parent set up, exactly as from any connection.
///
/// Darwin equivalent: the bootstrap port a child inherits from launchd or
/// `posix_spawn`'s special ports.
///
/// **Thread safety:** a value with one owner; any thread.
public struct ChildProcess: ~Copyable, Sendable {
    /// The environment variable naming the inherited descriptor.
    public static let environmentKey = "HARBOR_INITIAL_FD"
    /// The descriptor number the child inherits it as.
    public static let inheritedDescriptor: CInt = 3

    /// The child's process id.
    public let pid: pid_t
    private let pidDescriptor: CInt
    private var reaped = false

    /// Starts `executable` with `arguments` (not counting argv[0]) and sends it `initialMessage`.
    ///
    /// The child keeps stdin, stdout and stderr, its first connection (as
    /// ``inheritedDescriptor``) and the descriptors in `keeping`; no other
    /// descriptor of this process reaches it, close-on-exec or not.
    ///
    /// Costs one socket pair, one `posix_spawn` and one packet.
    /// - Parameters:
    ///   - executable: the program's path.
    ///   - arguments: its arguments, not counting argv[0] (which is `executable`).
    ///   - keeping: descriptors of this process, opened without
    ///     close-on-exec, that the child keeps under the same numbers (for a
    ///     child that takes plain descriptors besides its rights). Each must
    ///     be above ``inheritedDescriptor``.
    ///   - initialMessage: the message the child's
    ///     `Message/receiveInitial(timeout:)` returns, with its rights.
    /// - Throws: `PortError/Code/resourceShortage` or `PortError/Code/invalidArgument`
    ///   (with the system error) if the process cannot be started;
    ///   `PortError/Code/invalidArgument` if `keeping` names a number at or
    ///   below ``inheritedDescriptor``.
    public static func spawn(
        executable: String, arguments: [String] = [], keeping: [CInt] = [], initialMessage: consuming Message
    ) throws(PortError) -> ChildProcess {
        if let low = keeping.first(where: { $0 <= inheritedDescriptor }) {
            throw PortError(.invalidArgument, "descriptor \(low) cannot be kept: numbers up to \(inheritedDescriptor) are the child's")
        }
        let parentEnd: SharedDescriptor
        let childEnd: SharedDescriptor
        do {
            (parentEnd, childEnd) = try SeqPacketSocket.makePair()
            try SeqPacketSocket.passCredentials(childEnd.rawValue)
        } catch {
            throw PortError(error, "making the child's first connection")
        }
        var environment = ProcessControl.environment.filter { !$0.hasPrefix(environmentKey + "=") }
        environment.append("\(environmentKey)=\(inheritedDescriptor)")
        let pid: pid_t
        do {
            pid = try ProcessControl.spawn(
                executable, arguments: [executable] + arguments, environment: environment,
                inherit: (childEnd.rawValue, inheritedDescriptor), keeping: keeping)
        } catch {
            throw PortError(error, "starting \(executable)")
        }
        let pidfd = (try? ProcessControl.openDescriptor(pid)) ?? -1
        let child = ChildProcess(pid: pid, pidDescriptor: pidfd)
        let route = RemoteRoute(socket: parentEnd, slots: nil)
        var content = initialMessage.content
        try content.prepareForSending()
        content.countsAgainstLimit = false
        try route.send(content, deadline: .never, to: nil)
        return child
    }

    private init(pid: pid_t, pidDescriptor: CInt) {
        self.pid = pid
        self.pidDescriptor = pidDescriptor
    }

    deinit {
        if pidDescriptor >= 0 { DescriptorIO.close(pidDescriptor) }
    }

    /// Sends `signal` to the child (through its pidfd, so never to a reused pid).
    public func kill(_ signal: CInt) {
        if pidDescriptor >= 0 {
            _ = try? ProcessControl.sendSignal(signal, through: pidDescriptor)
        } else {
            _ = try? ProcessControl.sendSignal(signal, to: pid)
        }
    }

    /// Waits for the child to exit and returns its wait status (see `waitpid(2)`).
    public consuming func waitForExit() -> CInt {
        ProcessControl.waitForExit(pid)
    }
}

extension Message {
    /// Receives the first message this process's parent sent with
    /// ``ChildProcess/spawn(executable:arguments:keeping:initialMessage:)``, and
    /// closes the inherited descriptor. Call it once.
    ///
    /// - Throws: `PortError/Code/invalidArgument` if this process was not
    ///   started that way, `PortError/Code/timedOut`, or
    ///   `PortError/Code/malformedMessage` for anything that does not decode.
    public static func receiveInitial(timeout: Duration? = nil) throws(PortError) -> Message {
        guard let value = ProcessControl.environmentValue(ChildProcess.environmentKey), let number = CInt(value),
              number >= 0 else {
            throw PortError(.invalidArgument, "\(ChildProcess.environmentKey) is not set")
        }
        ProcessControl.unsetEnvironmentValue(ChildProcess.environmentKey)
        guard SeqPacketSocket.isSeqPacket(number) else {
            throw PortError(.invalidArgument, "\(ChildProcess.environmentKey) does not name a Harbor connection")
        }
        let socket = SharedDescriptor(taking: number)
        do {
            return try FirstMessage.receive(over: socket, timeout: timeout)
        } catch where error.code == .deadName {
            throw PortError(.malformedMessage, "the parent closed the connection without a message")
        }
    }
}
