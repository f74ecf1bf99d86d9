// Harbor — AF_UNIX SOCK_SEQPACKET sockets: packets, descriptors and credentials.
import CHarborLinux
import Glibc

/// What one `recvmsg` on a SEQPACKET socket produced.
@usableFromInline
package struct ReceivedPacket {
    /// Bytes of the packet in the caller's buffer; 0 with `isEndOfFile` means
    /// every peer has closed.
    package var byteCount: Int
    package var isEndOfFile: Bool
    /// The packet was longer than the buffer (MSG_TRUNC): the rest is gone.
    package var wasTruncated: Bool
    /// Control data did not fit (MSG_CTRUNC): descriptors may be missing.
    package var controlWasTruncated: Bool
    /// Every descriptor that arrived, owned until claimed; nil when none
    /// did (most packets), so those make no object.
    package var arrived: ArrivedDescriptors?
    /// The sender as the kernel reports it (SCM_CREDENTIALS), if attached.
    package var sender: ProcessIdentity?
    /// A pidfd on the sending process the kernel took when the packet was
    /// sent (SCM_PIDFD, on a socket with `SO_PASSPIDFD`), owned and closed
    /// with the packet; the error the kernel put in its place when it could
    /// make none (a sender already reaped, on kernels that keep no pidfd
    /// for one); nil when none was attached.
    package var senderProcess: Result<SharedDescriptor, SystemError>?

    package init(byteCount: Int, isEndOfFile: Bool, wasTruncated: Bool, controlWasTruncated: Bool,
                 descriptors: ArrivedDescriptors?, sender: ProcessIdentity?,
                 senderProcess: Result<SharedDescriptor, SystemError>? = nil) {
        self.byteCount = byteCount
        self.isEndOfFile = isEndOfFile
        self.wasTruncated = wasTruncated
        self.controlWasTruncated = controlWasTruncated
        self.arrived = descriptors.flatMap { $0.count == 0 ? nil : $0 }
        self.sender = sender
        self.senderProcess = senderProcess
    }

    /// How many descriptors arrived.
    package var descriptorCount: Int { arrived?.count ?? 0 }

    /// The arrived descriptors (an empty set when none arrived).
    package var descriptors: ArrivedDescriptors { arrived ?? ArrivedDescriptors([]) }
}

/// Thin, typed calls on SEQPACKET sockets. Every socket is created
/// `SOCK_CLOEXEC | SOCK_NONBLOCK`; every receive passes `MSG_CMSG_CLOEXEC`.
@usableFromInline
package enum SeqPacketSocket {
    /// The most descriptors one packet carries (the kernel's SCM_MAX_FD is 253).
    package static let maximumDescriptors = 253

    /// C: `socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK)`.
    package static func makePair() throws(SystemError) -> (SharedDescriptor, SharedDescriptor) {
        var fds: [CInt] = [-1, -1]
        _ = try systemCall("socketpair") {
            socketpair(AF_UNIX, Int32(charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC | charbor_SOCK_NONBLOCK), 0, &fds)
        }
        return (SharedDescriptor(taking: fds[0]), SharedDescriptor(taking: fds[1]))
    }

    /// Sets an integer socket option. C: `setsockopt(SOL_SOCKET)`.
    package static func setOption(_ fd: CInt, _ option: CInt, _ value: CInt) throws(SystemError) {
        var value = value
        _ = try systemCall("setsockopt") {
            setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<CInt>.size))
        }
    }

    /// Sends one packet of `parts` (gathered, not copied) with `descriptors`
    /// in SCM_RIGHTS. Returns false when the socket buffer is full (EAGAIN).
    /// Never raises SIGPIPE: a closed peer is `EPIPE`.
    /// C: `sendmsg(MSG_NOSIGNAL | MSG_DONTWAIT)`.
    @inline(never)
    package static func send(
        _ fd: CInt, parts: [UnsafeRawBufferPointer], descriptors: [CInt]
    ) throws(SystemError) -> Bool {
        var vectors = parts.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var message = msghdr()
        let controlLength = descriptors.isEmpty ? 0 : charbor_CMSG_SPACE(descriptors.count * 4)
        return try withUnsafeTemporaryAllocation(byteCount: max(controlLength, 1), alignment: 8) {
            control throws(SystemError) -> Bool in
            control.initializeMemory(as: UInt8.self, repeating: 0)
            return try vectors.withUnsafeMutableBufferPointer { vectorBuffer throws(SystemError) -> Bool in
                message.msg_iov = vectorBuffer.baseAddress
                message.msg_iovlen = vectorBuffer.count
                if controlLength > 0 {
                    attachRights(descriptors.count, to: &message, control: control) { descriptors[$0] }
                }
                let sent = try systemCallOrWouldBlock("sendmsg") {
                    sendmsg(fd, &message, Int32(charbor_MSG_NOSIGNAL | charbor_MSG_DONTWAIT))
                }
                return sent != nil
            }
        }
    }

    /// Sends one packet of `head`, `body` and `tail` with `descriptors` in
    /// SCM_RIGHTS: the encoded message's path, with no arrays made (the
    /// iovecs in a tuple, the numbers read straight from the objects).
    /// Same results as `send(_:parts:descriptors:)`.
    package static func send(
        _ fd: CInt, _ head: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer, _ tail: UnsafeRawBufferPointer,
        descriptors: [SharedDescriptor]
    ) throws(SystemError) -> Bool {
        var vectors = (iovec(iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress), iov_len: head.count),
                       iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count),
                       iovec(iov_base: UnsafeMutableRawPointer(mutating: tail.baseAddress), iov_len: tail.count))
        let controlLength = descriptors.isEmpty ? 0 : charbor_CMSG_SPACE(descriptors.count * 4)
        return try withUnsafeTemporaryAllocation(byteCount: max(controlLength, 1), alignment: 8) {
            control throws(SystemError) -> Bool in
            control.initializeMemory(as: UInt8.self, repeating: 0)
            return try withUnsafeMutablePointer(to: &vectors) { tuplePointer throws(SystemError) -> Bool in
                var message = msghdr()
                message.msg_iov = UnsafeMutableRawPointer(tuplePointer).assumingMemoryBound(to: iovec.self)
                message.msg_iovlen = 3
                if controlLength > 0 {
                    attachRights(descriptors.count, to: &message, control: control) { descriptors[$0].rawValue }
                }
                let sent = try systemCallOrWouldBlock("sendmsg") {
                    sendmsg(fd, &message, Int32(charbor_MSG_NOSIGNAL | charbor_MSG_DONTWAIT))
                }
                return sent != nil
            }
        }
    }

    /// Sends one packet of `header` then `body`, with `descriptors` (none by
    /// default) in SCM_RIGHTS: the path of a plain message, and of one that
    /// carries a single send right, with no arrays. Same results as
    /// `send(_:parts:descriptors:)`.
    @inline(never)
    package static func send(
        _ fd: CInt, _ header: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer,
        descriptors: UnsafeBufferPointer<CInt> = UnsafeBufferPointer(start: nil, count: 0)
    ) throws(SystemError) -> Bool {
        var vectors = (iovec(iov_base: UnsafeMutableRawPointer(mutating: header.baseAddress), iov_len: header.count),
                       iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count))
        return try withUnsafeMutablePointer(to: &vectors) { tuplePointer throws(SystemError) -> Bool in
            var message = msghdr()
            message.msg_iov = UnsafeMutableRawPointer(tuplePointer).assumingMemoryBound(to: iovec.self)
            message.msg_iovlen = body.isEmpty ? 1 : 2
            if descriptors.isEmpty {
                let sent = try systemCallOrWouldBlock("sendmsg") {
                    sendmsg(fd, &message, Int32(charbor_MSG_NOSIGNAL | charbor_MSG_DONTWAIT))
                }
                return sent != nil
            }
            let controlLength = charbor_CMSG_SPACE(descriptors.count * 4)
            return try withUnsafeTemporaryAllocation(byteCount: controlLength, alignment: 8) {
                control throws(SystemError) -> Bool in
                control.initializeMemory(as: UInt8.self, repeating: 0)
                attachRights(descriptors.count, to: &message, control: control) { descriptors[$0] }
                let sent = try systemCallOrWouldBlock("sendmsg") {
                    sendmsg(fd, &message, Int32(charbor_MSG_NOSIGNAL | charbor_MSG_DONTWAIT))
                }
                return sent != nil
            }
        }
    }

    /// Points `message` at `control`, which it fills with one SCM_RIGHTS
    /// message of `count` descriptors (`descriptor(index)` each). `control`
    /// holds `charbor_CMSG_SPACE(count * 4)` zeroed bytes.
    private static func attachRights(
        _ count: Int, to message: inout msghdr, control: UnsafeMutableRawBufferPointer, _ descriptor: (Int) -> CInt
    ) {
        message.msg_control = control.baseAddress
        message.msg_controllen = charbor_CMSG_SPACE(count * 4)
        let header = charbor_CMSG_FIRSTHDR(&message)!
        header.pointee.cmsg_level = SOL_SOCKET
        header.pointee.cmsg_type = Int32(charbor_SCM_RIGHTS)
        header.pointee.cmsg_len = charbor_CMSG_LEN(count * 4)
        let data = UnsafeMutableRawPointer(charbor_CMSG_DATA(header)!)
        for index in 0..<count {
            data.storeBytes(of: descriptor(index), toByteOffset: index * 4, as: CInt.self)
        }
    }

    /// The control buffer size `receive` needs: the most descriptors plus
    /// credentials plus a pidfd (SCM_PIDFD).
    package static let controlCapacity =
        charbor_CMSG_SPACE(maximumDescriptors * 4) + charbor_CMSG_SPACE(MemoryLayout<charbor_ucred>.size)
        + charbor_CMSG_SPACE(MemoryLayout<CInt>.size)

    /// Receives one packet into `buffer` without waiting; nil when none waits.
    /// `control` must hold ``controlCapacity`` bytes.
    /// C: `recvmsg(MSG_DONTWAIT | MSG_CMSG_CLOEXEC)`.
    @inline(never)
    package static func receive(
        _ fd: CInt, into buffer: UnsafeMutableRawBufferPointer, control: UnsafeMutableRawBufferPointer
    ) throws(SystemError) -> ReceivedPacket? {
        try receive(fd, into: buffer, scatter: nil, control: control)
    }

    /// Receives one packet, its bytes scattered: the first `scatter.split`
    /// bytes into `buffer`, the next `scatter.target.count` into
    /// `scatter.target`, the rest into `buffer` after the split (how a
    /// fragment's data lands in its region without a copy).
    /// C: `recvmsg` with three `iovec`s.
    @inline(never)
    package static func receive(
        _ fd: CInt, into buffer: UnsafeMutableRawBufferPointer,
        scatter: (split: Int, target: UnsafeMutableRawBufferPointer)?, control: UnsafeMutableRawBufferPointer
    ) throws(SystemError) -> ReceivedPacket? {
        guard let receipt = try receiveRaw(fd, into: buffer, scatter: scatter, control: control) else { return nil }
        return packet(receipt, control: control)
    }

    /// What `recvmsg` said, before its control data is read: plain values,
    /// so the hot path moves no references around. The control data stays
    /// in the caller's buffer (descriptors included) until ``packet(_:control:)``
    /// takes ownership of them.
    package struct Receipt {
        package var byteCount: Int
        package var flags: Int32
        package var controlLength: Int

        @inlinable package var wasTruncated: Bool { flags & Int32(charbor_MSG_TRUNC) != 0 }
        @inlinable package var controlWasTruncated: Bool { flags & Int32(charbor_MSG_CTRUNC) != 0 }
    }

    /// `receive`'s system call alone; nil when no packet waits.
    @inline(never)
    package static func receiveRaw(
        _ fd: CInt, into buffer: UnsafeMutableRawBufferPointer,
        scatter: (split: Int, target: UnsafeMutableRawBufferPointer)?, control: UnsafeMutableRawBufferPointer
    ) throws(SystemError) -> Receipt? {
        var vectors = (iovec(iov_base: buffer.baseAddress, iov_len: buffer.count), iovec(), iovec())
        var vectorCount = 1
        if let scatter {
            vectors.0.iov_len = scatter.split
            vectors.1 = iovec(iov_base: scatter.target.baseAddress, iov_len: scatter.target.count)
            vectors.2 = iovec(iov_base: buffer.baseAddress.map { $0 + scatter.split }, iov_len: buffer.count - scatter.split)
            vectorCount = 3
        }
        var message = msghdr()
        let count: Int? = try withUnsafeMutablePointer(to: &vectors) { tuplePointer throws(SystemError) -> Int? in
            let vectorPointer = UnsafeMutableRawPointer(tuplePointer).assumingMemoryBound(to: iovec.self)
            message.msg_iov = vectorPointer
            message.msg_iovlen = vectorCount
            message.msg_control = control.baseAddress
            message.msg_controllen = control.count
            return try systemCallOrWouldBlock("recvmsg") {
                recvmsg(fd, &message, Int32(charbor_MSG_DONTWAIT | charbor_MSG_CMSG_CLOEXEC))
            }
        }
        guard let count else { return nil }
        return Receipt(byteCount: count, flags: message.msg_flags, controlLength: Int(message.msg_controllen))
    }

    /// The sender's credentials when they are all the control data holds
    /// (no descriptors, nothing cut off): the common packet, read without
    /// making a ``ReceivedPacket``. Nil otherwise; then ``packet(_:control:)``
    /// reads everything.
    package static func credentialsAlone(_ receipt: Receipt, control: UnsafeMutableRawBufferPointer) -> ProcessIdentity? {
        guard !receipt.controlWasTruncated,
              receipt.controlLength == charbor_CMSG_SPACE(MemoryLayout<charbor_ucred>.size) else { return nil }
        var message = msghdr()
        message.msg_control = control.baseAddress
        message.msg_controllen = receipt.controlLength
        guard let header = charbor_CMSG_FIRSTHDR(&message), header.pointee.cmsg_level == SOL_SOCKET else { return nil }
        return credentials(header)
    }

    /// The sender's credentials and two descriptors, when that is all the
    /// control data holds (one `SCM_CREDENTIALS`, one `SCM_RIGHTS` of
    /// exactly two descriptors, no pidfd, nothing cut off): how a send right
    /// arrives alone (a look-up's answer). Nil otherwise. The descriptors
    /// are read, not taken: until the caller takes both (or hands the
    /// control data to ``packet(_:control:)``, which does, as for any
    /// packet) they are open in this process and owned by nothing.
    package static func credentialsAndDescriptorPair(
        _ receipt: Receipt, control: UnsafeMutableRawBufferPointer
    ) -> (sender: ProcessIdentity, first: CInt, second: CInt)? {
        let pair = MemoryLayout<CInt>.size * 2
        guard !receipt.controlWasTruncated,
              receipt.controlLength == charbor_CMSG_SPACE(MemoryLayout<charbor_ucred>.size) + charbor_CMSG_SPACE(pair)
        else { return nil }
        var message = msghdr()
        message.msg_control = control.baseAddress
        message.msg_controllen = receipt.controlLength
        var sender: ProcessIdentity?
        var descriptors: (CInt, CInt)?
        var header = charbor_CMSG_FIRSTHDR(&message)
        while let current = header {
            guard current.pointee.cmsg_level == SOL_SOCKET else { return nil }
            if current.pointee.cmsg_type == Int32(charbor_SCM_RIGHTS) {
                guard descriptors == nil, Int(current.pointee.cmsg_len) == Int(charbor_CMSG_LEN(pair)) else { return nil }
                let data = UnsafeRawPointer(charbor_CMSG_DATA(current)!)
                descriptors = (data.loadUnaligned(as: CInt.self),
                               data.loadUnaligned(fromByteOffset: MemoryLayout<CInt>.size, as: CInt.self))
            } else {
                guard sender == nil, let identity = credentials(current) else { return nil }
                sender = identity
            }
            header = charbor_CMSG_NXTHDR(&message, current)
        }
        guard let sender, let descriptors, descriptors.0 >= 0, descriptors.1 >= 0 else { return nil }
        return (sender, descriptors.0, descriptors.1)
    }

    /// The sender in an SCM_CREDENTIALS control message; nil for any other
    /// type, or one too short.
    private static func credentials(_ header: UnsafeMutablePointer<cmsghdr>) -> ProcessIdentity? {
        guard header.pointee.cmsg_type == Int32(charbor_SCM_CREDENTIALS),
              Int(header.pointee.cmsg_len) - Int(charbor_CMSG_LEN(0)) >= MemoryLayout<charbor_ucred>.size
        else { return nil }
        let ids = UnsafeRawPointer(charbor_CMSG_DATA(header)!).loadUnaligned(as: charbor_ucred.self)
        return ProcessIdentity(pid: ids.pid, uid: ids.uid, gid: ids.gid)
    }

    /// The packet `receipt` describes, its control data read: descriptors
    /// and the sender's pidfd (owned from here on, closed unless claimed)
    /// and credentials.
    package static func packet(_ receipt: Receipt, control: UnsafeMutableRawBufferPointer) -> ReceivedPacket {
        var descriptors: [CInt] = []
        var sender: ProcessIdentity?
        var senderProcess: Result<SharedDescriptor, SystemError>?
        if receipt.controlLength > 0 {
            var message = msghdr()
            message.msg_control = control.baseAddress
            message.msg_controllen = receipt.controlLength
            var header = charbor_CMSG_FIRSTHDR(&message)
            while let current = header {
                let data = UnsafeRawPointer(charbor_CMSG_DATA(current)!)
                let payload = Int(current.pointee.cmsg_len) - Int(charbor_CMSG_LEN(0))
                if current.pointee.cmsg_level == SOL_SOCKET {
                    if current.pointee.cmsg_type == Int32(charbor_SCM_RIGHTS) {
                        descriptors.reserveCapacity(descriptors.count + max(0, payload / 4))
                        for index in 0..<max(0, payload / 4) {
                            descriptors.append(data.loadUnaligned(fromByteOffset: index * 4, as: CInt.self))
                        }
                    } else if current.pointee.cmsg_type == Int32(charbor_SCM_PIDFD), payload >= 4 {
                        // A second one (no kernel sends it) closes the first.
                        senderProcess = processDescriptor(data.loadUnaligned(as: CInt.self))
                    } else if let identity = credentials(current) {
                        sender = identity
                    }
                }
                header = charbor_CMSG_NXTHDR(&message, current)
            }
        }
        let count = receipt.byteCount
        return ReceivedPacket(
            byteCount: count, isEndOfFile: count == 0 && descriptors.isEmpty && sender == nil,
            wasTruncated: receipt.wasTruncated, controlWasTruncated: receipt.controlWasTruncated,
            descriptors: descriptors.isEmpty ? nil : ArrivedDescriptors(descriptors), sender: sender,
            senderProcess: senderProcess)
    }

    /// What an SCM_PIDFD holds: a pidfd, owned; or, negative, the error
    /// the kernel met making one (the sender was reaped before the packet
    /// was read, on kernels that keep no pidfd for it).
    private static func processDescriptor(_ value: CInt) -> Result<SharedDescriptor, SystemError> {
        value >= 0 ? .success(SharedDescriptor(taking: value))
            : .failure(SystemError(errno: -value, call: "SCM_PIDFD"))
    }

    /// Polls `fd` without waiting; returns the `revents` bits. C: `poll(2)`, timeout 0.
    package static func pollNow(_ fd: CInt, events: Int16) -> Int16 {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        return poll(&entry, 1, 0) == 1 ? entry.revents : 0
    }
}
