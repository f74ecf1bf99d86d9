// Harbor — test support: a NOTIFY_SOCKET that records what a child tells systemd.
import CHarborLinux
import Glibc

/// A datagram the harness received, with the sender's pid from the kernel.
public struct NotifyDatagram: Sendable {
    /// The datagram's text (`READY=1\nSTATUS=…`).
    public var text: String
    /// The sender's pid, from SCM_CREDENTIALS (the kernel, not the sender).
    public var pid: pid_t
    /// Milliseconds since the harness was made.
    public var ms: Double
    /// The assignments, one per line.
    public var assignments: [String] { text.split(separator: "\n").map(String.init) }
}

/// Owns a NOTIFY_SOCKET: an AF_UNIX datagram socket with SO_PASSCRED, so
/// every message carries the sender's pid as the kernel saw it.
public final class NotifyHarness {
    public let descriptor: CInt
    public let directory: String
    /// The socket path: the child's NOTIFY_SOCKET.
    public let path: String
    private let start = ContinuousClock.now

    public init() {
        var template = Array("/tmp/harbor-sd-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        path = directory + "/notify.sock"
        descriptor = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | charbor_SOCK_CLOEXEC, 0)
        precondition(descriptor >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = self.path
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            _ = path.withCString { strncpy(raw.baseAddress!.assumingMemoryBound(to: CChar.self), $0, raw.count - 1) }
        }
        let fd = descriptor
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        precondition(bound == 0, "bind \(path): errno \(errno)")
        var on: CInt = 1
        setsockopt(descriptor, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<CInt>.size))
    }

    deinit {
        close(descriptor)
        unlink(path)
        rmdir(directory)
    }

    /// The next datagram, waiting at most until `deadline`; nil on timeout.
    public func receive(before deadline: ContinuousClock.Instant) -> NotifyDatagram? {
        let left = ContinuousClock.now.duration(to: deadline)
        var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ms = max(0, Int32(left / .milliseconds(1)))
        guard poll(&probe, 1, ms) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: 12 bytes, pid first.
        var control = [UInt8](repeating: 0, count: Int(charbor_CMSG_SPACE(12)) + 64)
        var pid: pid_t = 0
        let fd = descriptor
        let count = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    let received = recvmsg(fd, &header, 0)
                    var cmsg = charbor_CMSG_FIRSTHDR(&header)
                    while let current = cmsg {
                        if current.pointee.cmsg_level == SOL_SOCKET && current.pointee.cmsg_type == charbor_SCM_CREDENTIALS {
                            pid = UnsafeRawPointer(charbor_CMSG_DATA(current)!).loadUnaligned(as: pid_t.self)
                        }
                        cmsg = charbor_CMSG_NXTHDR(&header, current)
                    }
                    return received
                }
            }
        }
        guard count >= 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        let now = Double((ContinuousClock.now - start) / .microseconds(1)) / 1000
        return NotifyDatagram(text: text, pid: pid, ms: now)
    }

    /// Every datagram until `deadline` or until `stop` says so.
    public func collect(before deadline: ContinuousClock.Instant, until stop: (NotifyDatagram) -> Bool = { _ in false }) -> [NotifyDatagram] {
        var all: [NotifyDatagram] = []
        while let datagram = receive(before: deadline) {
            all.append(datagram)
            if stop(datagram) { break }
        }
        return all
    }
}
