// Harbor — what the kernel says a descriptor is: the facts a receiver can
// check about descriptors another process sent, whatever its bytes claim.
import CHarborLinux
import Glibc

/// The kernel's name for an open file: device and inode (`fstat`).
///
/// Two descriptors with equal keys refer to the same file. A memfd's inode
/// is reachable only through a descriptor for it (or, for the process's own
/// uid and root, `/proc/PID/fd`), so a key that matches one a receiver
/// already holds proves the sender held that file (P11).
package struct FileKey: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The key of `fd`'s file. C: `fstat`.
    package init(of fd: CInt) throws(SystemError) {
        var info = stat()
        _ = try systemCall("fstat") { fstat(fd, &info) }
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}

extension SeqPacketSocket {
    /// The inode of the socket `fd` is connected to: it names the other end,
    /// which only its holder can hand on (``SocketDiagnostics``).
    package static func peerInode(_ fd: CInt) throws(SystemError) -> UInt64 {
        try SocketDiagnostics.peerInode(of: fd)
    }

    /// The process that made the connection `fd` belongs to: for a socket
    /// pair, the process that called `socketpair`, as the kernel recorded it
    /// (`SO_PEERCRED`); whoever passes the socket on cannot change it.
    package static func creator(_ fd: CInt) throws(SystemError) -> ProcessIdentity {
        var credentials = charbor_ucred(pid: 0, uid: 0, gid: 0)
        var length = socklen_t(MemoryLayout<charbor_ucred>.size)
        _ = try systemCall("getsockopt(SO_PEERCRED)") {
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length)
        }
        return ProcessIdentity(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// Whether `fd` is an `AF_UNIX` `SOCK_SEQPACKET` socket, the only kind a
    /// right may travel as. C: `getsockopt(SO_TYPE)`.
    package static func isSeqPacket(_ fd: CInt) -> Bool {
        var type: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 && type == charbor_SOCK_SEQPACKET
    }
}
