// Harbor — socket activation: the descriptors systemd passed (LISTEN_FDS, LISTEN_FDNAMES).
import CSystemd
import Glibc  // constants only: SOCK_STREAM
import HarborPorts
import Synchronization
import HarborSystem

/// A descriptor the service manager passed to this process at start-up
/// (socket activation), with the name its unit gave it
/// (`FileDescriptorName=`, or `--fdname=` of `systemd-socket-activate`).
///
/// The object owns the descriptor and closes it when released, unless
/// ``takeDescriptor()`` took it first. Hand it to a run loop with
/// ``ActivatedSocketSource``.
///
/// **Thread safety:** any thread.
/// **Darwin equivalent:** `launch_activate_socket`.
public final class ActivatedSocket: Sendable, CustomStringConvertible {
    /// The name systemd gave it (`LISTEN_FDNAMES`), "unknown" if none.
    public let name: String
    /// The descriptor number (3, 4, … as passed). Borrowed: valid until the
    /// object goes or ``takeDescriptor()`` hands it on.
    public let descriptor: CInt
    private let owned = Atomic(true)

    init(name: String, descriptor: CInt) {
        self.name = name
        self.descriptor = descriptor
    }

    deinit { if owned.load(ordering: .acquiring) { DescriptorIO.close(descriptor) } }

    /// Takes ownership of the descriptor (the object will not close it);
    /// nil if it was already taken.
    public func takeDescriptor() -> CInt? {
        owned.exchange(false, ordering: .acquiringAndReleasing) ? descriptor : nil
    }

    /// Whether it is a listening stream socket (`sd_is_socket(fd, 0, SOCK_STREAM, 1)`).
    public var isListeningStreamSocket: Bool { sd_is_socket(descriptor, 0, CInt(SOCK_STREAM.rawValue), 1) > 0 }

    public var description: String { "ActivatedSocket(\(name), fd \(descriptor))" }
}

/// Reading what socket activation passed.
public enum SocketActivation {
    /// The descriptors passed to this process (`sd_listen_fds_with_names`),
    /// in order, owned by the returned objects and marked close-on-exec.
    ///
    /// Only a process whose pid is `LISTEN_PID` gets them; anyone else gets
    /// an empty array. By default the `LISTEN_*` variables are then removed,
    /// so children do not believe they were activated too.
    /// - Throws: ``SystemdError`` if the variables are malformed.
    public static func takeListenDescriptors(unsetEnvironment: Bool = true) throws(SystemdError) -> [ActivatedSocket] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = try checkSystemd(sd_listen_fds_with_names(unsetEnvironment ? 1 : 0, &names), "sd_listen_fds_with_names")
        defer {
            if let names {
                for index in 0..<Int(count) { CAllocation.free(names[index]) }
                CAllocation.free(names)
            }
        }
        return (0..<count).map { index in
            let fd = SD_LISTEN_FDS_START + index
            DescriptorIO.setCloseOnExec(fd)
            let name = names?[Int(index)].map { String(cString: $0) } ?? "unknown"
            return ActivatedSocket(name: name, descriptor: fd)
        }
    }
}
