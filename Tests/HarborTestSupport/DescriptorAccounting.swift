// Harbor — test support: counting this process's open descriptors.
import CHarborLinux
import Glibc

/// The descriptors this process has open now (entries of /proc/self/fd, not
/// counting the one used to list them).
public func openDescriptors() -> Set<CInt> {
    guard let directory = opendir("/proc/self/fd") else { return [] }
    let listing = dirfd(directory)
    var numbers = Set<CInt>()
    while let entry = readdir(directory) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        if let number = CInt(name), number != listing { numbers.insert(number) }
    }
    closedir(directory)
    return numbers
}

/// The number of descriptors this process has open now.
public func openDescriptorCount() -> Int { openDescriptors().count }

/// How many pidfds this process holds (`/proc/self/fd` links naming one:
/// `anon_inode:[pidfd]`, or `pidfd:[…]` on pidfs kernels).
public func openPidfdCount() -> Int {
    openDescriptors().filter { fd in
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard count > 0 else { return false }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self).contains("pidfd")
    }.count
}

/// What each descriptor in `numbers` refers to (`/proc/self/fd` links), for messages.
public func describe(_ numbers: Set<CInt>) -> String {
    numbers.sorted().map { number -> String in
        var buffer = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(number)", &buffer, 255)
        let target = length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return "\(number) → \(target)"
    }.joined(separator: ", ")
}

/// Raises this process's soft descriptor limit as far as the hard limit
/// allows (an unprivileged process cannot go past it); returns the new limit.
@discardableResult
public func raiseDescriptorLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    let target = min(rlim_t(wanted), limit.rlim_max)
    if limit.rlim_cur < target {
        limit.rlim_cur = target
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return Int(limit.rlim_cur)
}
