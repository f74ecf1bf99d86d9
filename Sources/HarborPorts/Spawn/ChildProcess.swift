// Harbor — starting a process with its first message (and so its first rights).
import CHarborLinux
import Glibc

/// A child process started by Harbor, holding its first message.
///
/// Before any name server exists, a process needs one right to start
/// talking. ``spawn(executable:arguments:initialMessage:)`` gives the child
/// one end of a socket pair, inherited as a descriptor named by the
/// environment variable ``environmentKey``, and sends `initialMessage` (with
/// whatever rights it carries) down it. The child calls
/// ``Message/receiveInitial(timeout:)`` once to get it. No API turns a raw
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
    /// Costs one socket pair, one `posix_spawn` and one packet.
    /// - Throws: ``PortError/Code/resourceShortage`` or ``PortError/Code/invalidArgument``
    ///   (with the system error) if the process cannot be started.
    public static func spawn(
        executable: String, arguments: [String] = [], initialMessage: consuming Message
    ) throws(PortError) -> ChildProcess {
        let parentEnd: SharedDescriptor
        let childEnd: SharedDescriptor
        do {
            (parentEnd, childEnd) = try SeqPacketSocket.makePair()
            try SeqPacketSocket.setOption(childEnd.rawValue, charbor_SO_PASSCRED, 1)
        } catch {
            throw PortError(error, "making the child's first connection")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto the same number would keep CLOEXEC; dup3 below avoids it.
        posix_spawn_file_actions_adddup2(&actions, childEnd.rawValue, inheritedDescriptor)
        var environment = currentEnvironment().filter { !$0.hasPrefix(environmentKey + "=") }
        environment.append("\(environmentKey)=\(inheritedDescriptor)")
        let argv = [executable] + arguments
        var pid: pid_t = 0
        let status = withCStrings(argv) { argvPointers in
            withCStrings(environment) { environmentPointers in
                posix_spawn(&pid, executable, &actions, nil, argvPointers, environmentPointers)
            }
        }
        if childEnd.rawValue == inheritedDescriptor {
            // Only possible if 3 was free before the pair: dup2(3, 3) keeps CLOEXEC.
            _ = fcntl(childEnd.rawValue, F_SETFD, 0)
        }
        guard status == 0 else {
            throw PortError(SystemError(errno: status, call: "posix_spawn"), "starting \(executable)")
        }
        let pidfd = charbor_pidfd_open(pid, 0)
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
        if pidDescriptor >= 0 { _ = Glibc.close(pidDescriptor) }
    }

    /// Sends `signal` to the child (through its pidfd, so never to a reused pid).
    public func kill(_ signal: CInt) {
        if pidDescriptor >= 0 { _ = charbor_pidfd_send_signal(pidDescriptor, signal) } else { _ = Glibc.kill(pid, signal) }
    }

    /// Waits for the child to exit and returns its wait status (see `waitpid(2)`).
    public consuming func waitForExit() -> CInt {
        var status: CInt = 0
        while waitpid(pid, &status, 0) == -1 && charbor_errno() == EINTR {}
        return status
    }
}

extension Message {
    /// Receives the first message this process's parent sent with
    /// ``ChildProcess/spawn(executable:arguments:initialMessage:)``, and
    /// closes the inherited descriptor. Call it once.
    ///
    /// - Throws: ``PortError/Code/invalidArgument`` if this process was not
    ///   started that way, ``PortError/Code/timedOut``, or
    ///   ``PortError/Code/malformedMessage`` for anything that does not decode.
    public static func receiveInitial(timeout: Duration? = nil) throws(PortError) -> Message {
        guard let value = getenv(ChildProcess.environmentKey), let number = CInt(String(cString: value)),
              number >= 0 else {
            throw PortError(.invalidArgument, "\(ChildProcess.environmentKey) is not set")
        }
        unsetenv(ChildProcess.environmentKey)
        var type: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(number, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == charbor_SOCK_SEQPACKET else {
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

private func currentEnvironment() -> [String] {
    var result: [String] = []
    guard var pointer = charbor_environ() else { return result }
    while let entry = pointer.pointee {
        result.append(String(cString: entry))
        pointer += 1
    }
    return result
}

private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}
