// Harbor — memfd_create(2), seals and mappings: memory that travels as a descriptor.
import CHarborLinux
import Glibc

/// Typed calls on memory files (memfds) and their mappings.
package enum MemoryFile {
    /// Creates an empty memfd that allows sealing. C: `memfd_create(MFD_CLOEXEC | MFD_ALLOW_SEALING)`.
    package static func create(name: String) throws(SystemError) -> SharedDescriptor {
        let fd = try systemCall("memfd_create") {
            charbor_memfd_create(name, UInt32(charbor_MFD_CLOEXEC | charbor_MFD_ALLOW_SEALING))
        }
        return SharedDescriptor(taking: fd)
    }

    /// Sets the size. C: `ftruncate(2)`.
    package static func setSize(_ fd: CInt, _ size: Int) throws(SystemError) {
        _ = try systemCall("ftruncate") { ftruncate(fd, off_t(size)) }
    }

    /// The size in bytes. C: `fstat(2)`.
    package static func size(_ fd: CInt) throws(SystemError) -> Int {
        var info = stat()
        _ = try systemCall("fstat") { fstat(fd, &info) }
        return Int(info.st_size)
    }

    /// Every seal: no write, shrink or grow, and no seal removed or added
    /// (what a memfd must carry before a receiver may trust its bytes).
    package static let allSeals = charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW
        | charbor_F_SEAL_SEAL

    /// The seals of a memory file whose size is fixed but whose bytes stay
    /// writable (a shared counter): no shrink, no grow, no seal added or
    /// removed. Shrinking under another process's mapping would SIGBUS it.
    package static let fixedSizeSeals = charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL

    /// The seal that forbids shrinking: what a mapper needs before it may
    /// touch the pages (F_SEAL_SHRINK).
    package static let shrinkSeal = charbor_F_SEAL_SHRINK

    /// Adds seals (F_SEAL_*). C: `fcntl(F_ADD_SEALS)`.
    package static func addSeals(_ fd: CInt, _ seals: CInt) throws(SystemError) {
        _ = try systemCall("fcntl(F_ADD_SEALS)") { fcntl(fd, charbor_F_ADD_SEALS, seals) }
    }

    /// The seals in force; fails (EINVAL) for anything but a memfd. C: `fcntl(F_GET_SEALS)`.
    package static func seals(_ fd: CInt) throws(SystemError) -> CInt {
        try systemCall("fcntl(F_GET_SEALS)") { fcntl(fd, charbor_F_GET_SEALS) }
    }

    /// Writes `parts` one after another from offset 0. C: `pwrite(2)`.
    package static func writeAll(_ fd: CInt, _ parts: [[UInt8]]) throws(SystemError) {
        var offset = 0
        for part in parts {
            var done = 0
            while done < part.count {
                let written = try part.withUnsafeBytes { bytes in
                    Result { () throws(SystemError) in
                        try systemCall("pwrite") {
                            pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
                        }
                    }
                }.get()
                done += written
            }
            offset += part.count
        }
    }

    /// Maps `size` bytes shared. With `populate`, the kernel allocates (for
    /// a writable map of a fresh file) and maps every page in this one call
    /// instead of one page fault per page touched later: measured about 1.2 times
    /// faster to fill a 1 MiB or 16 MiB out-of-line buffer here. C: `mmap(MAP_SHARED [| MAP_POPULATE])`.
    package static func map(
        _ fd: CInt, size: Int, writable: Bool, populate: Bool = false
    ) throws(SystemError) -> UnsafeMutableRawPointer {
        let protection = writable ? (PROT_READ | PROT_WRITE) : PROT_READ
        let flags = MAP_SHARED | (populate ? MAP_POPULATE : 0)
        guard let address = mmap(nil, size, protection, flags, fd, 0), address != MAP_FAILED else {
            throw SystemError(errno: charbor_errno(), call: "mmap")
        }
        return address
    }

    /// C: `munmap(2)`.
    package static func unmap(_ address: UnsafeMutableRawPointer, size: Int) {
        _ = munmap(address, size)
    }
}
