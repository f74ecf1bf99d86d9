// Harbor — epoll calls on a set owned elsewhere (a port's readiness set).
import CHarborLinux
import Glibc

/// `epoll_ctl` and a zero-timeout `epoll_wait` on a raw epoll descriptor the
/// caller keeps alive; the port transport uses them on its port's set.
package enum EpollControl {
    /// C: `epoll_ctl(EPOLL_CTL_ADD)`.
    package static func add(_ epollFD: CInt, _ fd: CInt, events: EpollEvents, token: UInt64) throws(SystemError) {
        var event = epoll_event(events: events.rawValue, data: epoll_data_t(u64: token))
        _ = try systemCall("epoll_ctl(ADD)") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
    }

    /// C: `epoll_ctl(EPOLL_CTL_DEL)`; a descriptor already gone is not an error.
    package static func remove(_ epollFD: CInt, _ fd: CInt) {
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
    }

    /// Collects what is ready now, without waiting. C: `epoll_wait(timeout 0)`.
    package static func poll(_ epollFD: CInt, into buffer: UnsafeMutableBufferPointer<epoll_event>) -> Int {
        let count = epoll_wait(epollFD, buffer.baseAddress, CInt(buffer.count), 0)
        return count > 0 ? Int(count) : 0
    }
}
