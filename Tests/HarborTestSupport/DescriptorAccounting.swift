// Harbor — test support: counting this process's open descriptors.
import CHarborLinux
import Glibc

/// The number of descriptors this process has open now (entries of /proc/self/fd,
/// not counting the one used to list them).
public func openDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        if name != "." && name != ".." { count += 1 }
    }
    return count - 1
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
