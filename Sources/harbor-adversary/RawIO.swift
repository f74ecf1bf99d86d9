// harbor-adversary — raw system calls: sendmsg with SCM_RIGHTS, recvmsg,
// socket pairs, memfds and eventfds. Nothing here goes through Harbor.
import CHarborLinux
import Glibc

/// How one `sendmsg` went.
enum SendOutcome: Equatable {
    case sent
    /// The socket buffer is full (EAGAIN) and the send did not wait.
    case full
    /// The other end is gone (EPIPE, ECONNRESET).
    case closed
    case failed(CInt)
}

enum RawIO {
    /// Sends one packet with `descriptors` in SCM_RIGHTS. With `wait`, polls
    /// for room up to that long when the socket is full.
    static func send(_ fd: CInt, _ parts: [[UInt8]], descriptors: [CInt] = [], wait: Duration = .zero) -> SendOutcome {
        let deadline = ContinuousClock.now + wait
        while true {
            let outcome = sendOnce(fd, parts, descriptors: descriptors)
            guard outcome == .full, ContinuousClock.now < deadline else { return outcome }
            var probe = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let left = ContinuousClock.now.duration(to: deadline)
            _ = poll(&probe, 1, CInt(max(1, min(1000, left / .milliseconds(1)))))
        }
    }

    private static func sendOnce(_ fd: CInt, _ parts: [[UInt8]], descriptors: [CInt]) -> SendOutcome {
        var storage = parts
        var vectors: [iovec] = []
        let count = storage.count
        return storage.withUnsafeMutableBufferPointer { buffers -> SendOutcome in
            for index in 0..<count {
                buffers[index].withUnsafeMutableBytes { raw in
                    vectors.append(iovec(iov_base: raw.baseAddress, iov_len: raw.count))
                }
            }
            // The arrays' storage outlives this closure, so the pointers stay valid.
            let controlLength = descriptors.isEmpty ? 0 : charbor_CMSG_SPACE(descriptors.count * 4)
            var control = [UInt8](repeating: 0, count: max(controlLength, 8))
            return control.withUnsafeMutableBytes { controlBytes -> SendOutcome in
                vectors.withUnsafeMutableBufferPointer { vectorBuffer -> SendOutcome in
                    var message = msghdr()
                    message.msg_iov = vectorBuffer.baseAddress
                    message.msg_iovlen = vectorBuffer.count
                    if controlLength > 0 {
                        message.msg_control = controlBytes.baseAddress
                        message.msg_controllen = controlLength
                        let header = charbor_CMSG_FIRSTHDR(&message)!
                        header.pointee.cmsg_level = SOL_SOCKET
                        header.pointee.cmsg_type = CInt(SCM_RIGHTS)
                        header.pointee.cmsg_len = charbor_CMSG_LEN(descriptors.count * 4)
                        let data = UnsafeMutableRawPointer(charbor_CMSG_DATA(header)!)
                        for (index, descriptor) in descriptors.enumerated() {
                            data.storeBytes(of: descriptor, toByteOffset: index * 4, as: CInt.self)
                        }
                    }
                    let sent = sendmsg(fd, &message, CInt(MSG_NOSIGNAL) | CInt(MSG_DONTWAIT))
                    if sent >= 0 { return .sent }
                    let error = errno
                    if error == EAGAIN || error == EWOULDBLOCK { return .full }
                    if error == EPIPE || error == ECONNRESET { return .closed }
                    return .failed(error)
                }
            }
        }
    }

    /// One received packet: its bytes and the descriptors that came with it
    /// (the caller owns and closes them). Nil at EOF, on error or timeout.
    static func receive(_ fd: CInt, timeout: Duration) -> (bytes: [UInt8], descriptors: [CInt])? {
        var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&probe, 1, CInt(timeout / .milliseconds(1))) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 128 * 1024)
        var control = [UInt8](repeating: 0, count: 4096)
        var received: [CInt] = []
        let count = buffer.withUnsafeMutableBytes { bufferBytes -> Int in
            control.withUnsafeMutableBytes { controlBytes -> Int in
                var vector = iovec(iov_base: bufferBytes.baseAddress, iov_len: bufferBytes.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer -> Int in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let count = recvmsg(fd, &message, CInt(MSG_CMSG_CLOEXEC) | CInt(MSG_DONTWAIT))
                    guard count >= 0 else { return -1 }
                    var header = charbor_CMSG_FIRSTHDR(&message)
                    while let current = header {
                        if current.pointee.cmsg_level == SOL_SOCKET && current.pointee.cmsg_type == CInt(SCM_RIGHTS) {
                            let bytes = Int(current.pointee.cmsg_len) - Int(charbor_CMSG_LEN(0))
                            let data = UnsafeRawPointer(charbor_CMSG_DATA(current)!)
                            for index in 0..<(bytes / 4) {
                                received.append(data.loadUnaligned(fromByteOffset: index * 4, as: CInt.self))
                            }
                        }
                        header = charbor_CMSG_NXTHDR(&message, current)
                    }
                    return count
                }
            }
        }
        guard count > 0 else {
            for descriptor in received { close(descriptor) }
            return nil
        }
        return (Array(buffer[0..<count]), received)
    }

    /// A connected SEQPACKET pair (close-on-exec, non-blocking).
    static func socketPair() -> (CInt, CInt) {
        var fds: [CInt] = [-1, -1]
        let made = socketpair(AF_UNIX, CInt(charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC | charbor_SOCK_NONBLOCK), 0, &fds)
        precondition(made == 0, "socketpair: \(errno)")  // the adversary's own resources: fail loudly
        return (fds[0], fds[1])
    }

    /// A memfd of `size` bytes with `seals` added (F_SEAL_*), or -1.
    static func memoryFile(size: Int, seals: CInt) -> CInt {
        let fd = charbor_memfd_create("adversary", CUnsignedInt(charbor_MFD_CLOEXEC | charbor_MFD_ALLOW_SEALING))
        guard fd >= 0 else { return -1 }
        guard ftruncate(fd, off_t(size)) == 0 else {
            close(fd)
            return -1
        }
        if seals != 0 { _ = fcntl(fd, charbor_F_ADD_SEALS, seals) }
        return fd
    }

    static func eventDescriptor() -> CInt { eventfd(0, CInt(EFD_CLOEXEC | EFD_NONBLOCK)) }

    /// The device and inode of an open file (a slot counter's identity), or
    /// nil if `fstat` fails or either needs more than 32 bits.
    static func file32(_ fd: CInt) -> (device: UInt32, inode: UInt32)? {
        var info = stat()
        guard fstat(fd, &info) == 0, let device = UInt32(exactly: info.st_dev),
              let inode = UInt32(exactly: info.st_ino) else { return nil }
        return (device, inode)
    }

    /// The inode of an open file (a socket's identity).
    static func inode(_ fd: CInt) -> UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return 0 }
        return UInt64(info.st_ino)
    }

    /// Raises the soft descriptor limit to the hard one (hoarding needs room).
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }
}

/// A packet someone sent the adversary, decoded just enough: id, body and
/// the rights with their descriptors.
struct Inbound {
    struct Right {
        var kind: UInt8
        var identity: Identity
        var descriptors: [CInt]
    }

    var kind: UInt8
    var flags: UInt16
    var id: Int32
    var body: [UInt8]
    var rights: [Right]
    var descriptors: [CInt]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// Decodes a packet the adversary received (from an honest peer: little
    /// checking). Nil if it is not a message it understands.
    init?(_ bytes: [UInt8], descriptors: [CInt]) {
        guard bytes.count >= Wire.headerSize, bytes[0] == Wire.version else { return nil }
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
        func u32(_ offset: Int) -> Int { u16(offset) | u16(offset + 2) << 16 }
        func u64(_ offset: Int) -> UInt64 { UInt64(u32(offset)) | UInt64(u32(offset + 4)) << 32 }
        kind = bytes[1]
        flags = UInt16(u16(2))
        id = Int32(truncatingIfNeeded: u32(4))
        let bodyLength = u32(8)
        let entries = u16(12)
        self.descriptors = descriptors
        let bodyStart = Wire.headerSize + entries * Wire.entrySize
        guard bodyStart + bodyLength <= bytes.count else { return nil }
        body = Array(bytes[bodyStart..<(bodyStart + bodyLength)])
        rights = []
        for index in 0..<entries {
            let at = Wire.headerSize + index * Wire.entrySize
            let count = Int(bytes[at + 1])
            let first = u32(at + 4)
            let owned = (first..<(first + count)).compactMap { $0 < descriptors.count ? descriptors[$0] : nil }
            rights.append(Right(kind: bytes[at], identity: Identity(origin: u64(at + 8), number: u64(at + 16)),
                                descriptors: owned))
        }
    }

    /// Closes every descriptor that came with it.
    func closeAll() { for descriptor in descriptors { close(descriptor) } }
}
