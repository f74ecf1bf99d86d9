// Harbor — the kernel's socket diagnostics (sock_diag(7)) for one Unix
// socket: one netlink request naming it by inode, one answer.
import CHarborLinux
import Glibc

/// A client of `NETLINK_SOCK_DIAG` for `AF_UNIX` sockets: the only way to
/// learn which socket a descriptor is connected to.
///
/// One request per question, on a netlink socket opened and closed around
/// it; the answer is parsed as untrusted bytes (every length checked against
/// what was received).
package enum SocketDiagnostics {
    /// netlink's alignment of headers and attributes (`NLMSG_ALIGNTO`, `RTA_ALIGNTO`).
    private static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }

    /// The inode of the socket `fd` is connected to: it names the other end,
    /// which only its holder can hand on. Throws `ENOENT` when the socket has
    /// no peer or the kernel lacks `unix_diag`.
    /// C: `socket(AF_NETLINK, NETLINK_SOCK_DIAG)`, `SOCK_DIAG_BY_FAMILY`
    /// with `UDIAG_SHOW_PEER`.
    package static func peerInode(of fd: CInt) throws(SystemError) -> UInt64 {
        // The kernel names a Unix socket by the 32-bit inode of its file.
        let inode = UInt32(truncatingIfNeeded: try FileKey(of: fd).inode)
        let link = OwnedDescriptor(taking: try systemCall("socket(AF_NETLINK)") {
            socket(AF_NETLINK, CInt(SOCK_DGRAM.rawValue) | charbor_SOCK_CLOEXEC, NETLINK_SOCK_DIAG)
        })
        try ask(link.rawValue, about: inode)
        var answer = [UInt8](repeating: 0, count: 1024)
        let length = try systemCall("recv(NETLINK_SOCK_DIAG)") {
            answer.withUnsafeMutableBytes { recv(link.rawValue, $0.baseAddress, $0.count, 0) }
        }
        let found = answer.withUnsafeBytes { bytes in
            peer(of: inode, in: UnsafeRawBufferPointer(rebasing: bytes[..<Int(length)]))
        }
        switch found {
        case .success(let inode): return inode
        case .failure(let error): throw error
        }
    }

    /// Sends the one request: a netlink header, then a `unix_diag_req`
    /// asking for the peer of the socket with `inode`, in any state.
    private static func ask(_ link: CInt, about inode: UInt32) throws(SystemError) {
        let headerLength = aligned(MemoryLayout<nlmsghdr>.size)
        let total = headerLength + MemoryLayout<unix_diag_req>.size
        var header = nlmsghdr()
        header.nlmsg_len = UInt32(total)
        header.nlmsg_type = UInt16(SOCK_DIAG_BY_FAMILY)
        header.nlmsg_flags = UInt16(NLM_F_REQUEST)
        var request = unix_diag_req()
        request.sdiag_family = UInt8(AF_UNIX)
        request.udiag_states = ~0
        request.udiag_ino = inode
        request.udiag_show = UInt32(UDIAG_SHOW_PEER)
        request.udiag_cookie = (~0, ~0)  // any cookie
        var packet = [UInt8](repeating: 0, count: total)
        packet.withUnsafeMutableBytes { buffer in
            buffer.storeBytes(of: header, toByteOffset: 0, as: nlmsghdr.self)
            buffer.storeBytes(of: request, toByteOffset: headerLength, as: unix_diag_req.self)
        }
        _ = try systemCall("send(NETLINK_SOCK_DIAG)") {
            packet.withUnsafeBytes { send(link, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Reads the answer: netlink messages, one of which describes the socket
    /// with `inode` and carries a `UNIX_DIAG_PEER` attribute.
    private static func peer(of inode: UInt32, in answer: UnsafeRawBufferPointer) -> Result<UInt64, SystemError> {
        let headerSize = MemoryLayout<nlmsghdr>.size
        let headerLength = aligned(headerSize)
        var offset = 0
        while answer.count - offset >= headerSize {
            let header = answer.loadUnaligned(fromByteOffset: offset, as: nlmsghdr.self)
            let length = Int(header.nlmsg_len)
            guard length >= headerSize, length <= answer.count - offset else { break }
            defer { offset += aligned(length) }
            let body = UnsafeRawBufferPointer(rebasing: answer[(offset + headerLength)..<(offset + length)])
            if header.nlmsg_type == UInt16(NLMSG_ERROR) {
                let error = body.count >= MemoryLayout<CInt>.size ? body.loadUnaligned(as: CInt.self) : 0
                return .failure(SystemError(errno: error < 0 ? -error : ENOENT, call: "sock_diag(UNIX_DIAG_PEER)"))
            }
            guard header.nlmsg_type == UInt16(SOCK_DIAG_BY_FAMILY),
                  body.count >= MemoryLayout<unix_diag_msg>.size else { continue }
            let message = body.loadUnaligned(as: unix_diag_msg.self)
            guard message.udiag_ino == inode else { continue }
            let attributes = UnsafeRawBufferPointer(rebasing: body[aligned(MemoryLayout<unix_diag_msg>.size)...])
            if let peer = peerAttribute(in: attributes) { return .success(UInt64(peer)) }
            break
        }
        return .failure(SystemError(errno: ENOENT, call: "sock_diag(UNIX_DIAG_PEER)"))
    }

    /// The `UNIX_DIAG_PEER` attribute's value among `attributes` (each a
    /// 4-byte `rtattr` header, length then type, then its payload).
    private static func peerAttribute(in attributes: UnsafeRawBufferPointer) -> UInt32? {
        var offset = 0
        while attributes.count - offset >= 4 {
            let length = Int(attributes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = attributes.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)
            guard length >= 4, length <= attributes.count - offset else { return nil }
            if type == UInt16(UNIX_DIAG_PEER), length - 4 >= MemoryLayout<UInt32>.size {
                return attributes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            }
            offset += aligned(length)
        }
        return nil
    }
}
