// Harbor — the raw Linux calls the cross-process floors are made of: socket pairs, epoll, SCM_RIGHTS, memfds.
import CHarborLinux
import Glibc

/// Plain system calls for the floor variants and the peer process. No
/// Harbor code: these are what a C programmer would write.
enum Raw {
    /// A socket pair whose descriptors are inherited across exec (no
    /// CLOEXEC) and moved to numbers ≥ 10, so `ChildProcess.spawn`'s dup to
    /// descriptor 3 cannot overwrite one of them.
    static func inheritablePair(_ type: CInt, nonBlocking: Bool) throws -> (CInt, CInt) {
        var fds: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, type | (nonBlocking ? Int32(charbor_SOCK_NONBLOCK) : 0), 0, &fds) == 0 else {
            throw BenchmarkFailure("socketpair: errno \(charbor_errno())")
        }
        return (try moveHigh(fds[0]), try moveHigh(fds[1]))
    }

    static func moveHigh(_ fd: CInt) throws -> CInt {
        let moved = fcntl(fd, F_DUPFD, CInt(10))
        guard moved >= 0 else { throw BenchmarkFailure("F_DUPFD: errno \(charbor_errno())") }
        close(fd)
        return moved
    }

    static let seqPacket = Int32(charbor_SOCK_SEQPACKET)
    static let stream = Int32(SOCK_STREAM.rawValue)

    /// An epoll set watching `fd` for input.
    static func epoll(watching fd: CInt) throws -> CInt {
        let set = epoll_create1(Int32(charbor_EPOLL_CLOEXEC))
        var registration = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(fd)))
        guard set >= 0, epoll_ctl(set, EPOLL_CTL_ADD, fd, &registration) == 0 else {
            throw BenchmarkFailure("epoll: errno \(charbor_errno())")
        }
        return set
    }

    /// Sleeps in `epoll_wait` until one descriptor is ready.
    @inline(__always)
    static func waitReady(_ set: CInt) {
        var event = epoll_event()
        while epoll_wait(set, &event, 1, -1) != 1 {}
    }

    /// `recvmsg` with a control buffer for the SCM_CREDENTIALS the kernel
    /// attaches when SO_PASSCRED is set (as Harbor receives); the byte count.
    @inline(__always)
    static func receiveWithCredentials(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ capacity: Int,
                                       control: UnsafeMutableRawPointer) -> Int {
        var vector = iovec(iov_base: buffer, iov_len: capacity)
        var message = msghdr()
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            message.msg_iov = vectorPointer
            message.msg_iovlen = 1
            message.msg_control = control
            message.msg_controllen = 256
            return recvmsg(fd, &message, 0)
        }
    }

    /// One `recvmsg` into `bytes`; closes the descriptors that came with it
    /// (in whichever control message holds them: credentials may come
    /// first) and returns how many did (-1 if the peer is gone).
    @inline(__always)
    static func receiveClosingDescriptors(
        _ socket: CInt, _ bytes: UnsafeMutableRawBufferPointer, control: UnsafeMutableRawPointer, space: Int
    ) -> Int {
        var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
        var message = msghdr()
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            message.msg_iov = vectorPointer
            message.msg_iovlen = 1
            message.msg_control = control
            message.msg_controllen = space
            guard recvmsg(socket, &message, Int32(charbor_MSG_CMSG_CLOEXEC)) > 0 else { return -1 }
            var closed = 0
            var next = message.msg_controllen > 0 ? charbor_CMSG_FIRSTHDR(&message) : nil
            while let header = next {
                if header.pointee.cmsg_level == SOL_SOCKET, header.pointee.cmsg_type == Int32(charbor_SCM_RIGHTS) {
                    let count = (Int(header.pointee.cmsg_len) - charbor_CMSG_LEN(0)) / MemoryLayout<CInt>.size
                    let descriptors = UnsafeRawPointer(charbor_CMSG_DATA(header)!)
                    for index in 0..<count { close(descriptors.load(fromByteOffset: index * 4, as: CInt.self)) }
                    closed += count
                }
                next = charbor_CMSG_NXTHDR(&message, header)
            }
            return closed
        }
    }

    /// Writes all of `count` bytes to a blocking descriptor.
    static func writeAll(_ fd: CInt, _ bytes: UnsafeRawPointer, _ count: Int) {
        var done = 0
        while done < count {
            let written = write(fd, bytes + done, count - done)
            if written > 0 { done += written } else if charbor_errno() != EINTR { abortBenchmark("write: errno \(charbor_errno())") }
        }
    }

    /// Sends `count` bytes in one packet with `descriptor` in SCM_RIGHTS.
    @inline(__always)
    static func sendWithDescriptor(_ fd: CInt, _ bytes: UnsafeRawPointer, _ count: Int, descriptor: CInt) -> Bool {
        sendWithDescriptors(fd, bytes, count, descriptor, nil)
    }

    /// Sends `count` bytes in one packet with `first` (and `second`, if
    /// any) in one SCM_RIGHTS message.
    static func sendWithDescriptors(_ fd: CInt, _ bytes: UnsafeRawPointer, _ count: Int, _ first: CInt, _ second: CInt?) -> Bool {
        var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes), iov_len: count)
        var message = msghdr()
        let length = (second == nil ? 1 : 2) * MemoryLayout<CInt>.size
        let space = charbor_CMSG_SPACE(length)
        return withUnsafeTemporaryAllocation(byteCount: space, alignment: 8) { control in
            control.initializeMemory(as: UInt8.self, repeating: 0)
            return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                message.msg_iov = vectorPointer
                message.msg_iovlen = 1
                message.msg_control = control.baseAddress
                message.msg_controllen = space
                let header = charbor_CMSG_FIRSTHDR(&message)!
                header.pointee.cmsg_level = SOL_SOCKET
                header.pointee.cmsg_type = Int32(charbor_SCM_RIGHTS)
                header.pointee.cmsg_len = charbor_CMSG_LEN(length)
                let data = UnsafeMutableRawPointer(charbor_CMSG_DATA(header)!)
                data.storeBytes(of: first, as: CInt.self)
                if let second { data.storeBytes(of: second, toByteOffset: MemoryLayout<CInt>.size, as: CInt.self) }
                return sendmsg(fd, &message, Int32(charbor_MSG_NOSIGNAL)) == count
            }
        }
    }

    /// Receives one packet into `buffer`; returns its length and the descriptor that came with it (or -1).
    static func receiveWithDescriptor(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ capacity: Int) -> (Int, CInt) {
        var vector = iovec(iov_base: buffer, iov_len: capacity)
        var message = msghdr()
        let space = charbor_CMSG_SPACE(4)
        return withUnsafeTemporaryAllocation(byteCount: space, alignment: 8) { control in
            withUnsafeMutablePointer(to: &vector) { vectorPointer in
                message.msg_iov = vectorPointer
                message.msg_iovlen = 1
                message.msg_control = control.baseAddress
                message.msg_controllen = space
                let count = recvmsg(fd, &message, Int32(charbor_MSG_CMSG_CLOEXEC))
                var received: CInt = -1
                if message.msg_controllen > 0, let header = charbor_CMSG_FIRSTHDR(&message),
                   header.pointee.cmsg_type == Int32(charbor_SCM_RIGHTS) {
                    received = UnsafeRawPointer(charbor_CMSG_DATA(header)!).load(as: CInt.self)
                }
                return (count, received)
            }
        }
    }
}

/// The payload checksum every receiver computes, so each variant touches
/// every byte it received: the wrapping sum of the 64-bit words.
@inline(__always)
func payloadChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    let words = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt64.self), count: bytes.count / 8)
    var sum: UInt64 = 0
    for word in words { sum &+= word }
    return sum
}

/// The checksum of `count` bytes all equal to `byte`.
func expectedChecksum(byte: UInt8, count: Int) -> UInt64 {
    (UInt64(byte) &* 0x0101_0101_0101_0101) &* UInt64(count / 8)
}
