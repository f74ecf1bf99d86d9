// Harbor — the idle floor: one epoll_wait on a timerfd armed an hour away.
import CHarborLinux
import CoreFoundation  // timespec comes from CoreFoundation once Foundation is in the target
import Glibc

/// An epoll set holding one timerfd armed an hour ahead: what waiting costs
/// with no run loop at all.
final class IdleFloorWaiter {
    private let poller: CInt
    private let timer: CInt

    init?() {
        poller = epoll_create1(Int32(charbor_EPOLL_CLOEXEC))
        timer = timerfd_create(CLOCK_MONOTONIC, Int32(charbor_TFD_CLOEXEC | charbor_TFD_NONBLOCK))
        guard poller >= 0, timer >= 0 else { return nil }
        var spec = itimerspec()
        spec.it_value.tv_sec = 3600
        var registration = epoll_event()
        registration.events = EPOLLIN.rawValue
        registration.data.u64 = 1
        guard timerfd_settime(timer, 0, &spec, nil) == 0,
              epoll_ctl(poller, EPOLL_CTL_ADD, timer, &registration) == 0 else { return nil }
    }

    /// Sleeps in epoll_wait until `nanoseconds` have passed.
    func wait(nanoseconds: Int64) {
        let end = nowNanoseconds() + nanoseconds
        var event = epoll_event()
        while true {
            let left = end - nowNanoseconds()
            if left <= 0 { return }
            _ = epoll_wait(poller, &event, 1, CInt((left + 999_999) / 1_000_000))
        }
    }

    deinit {
        if timer >= 0 { close(timer) }
        if poller >= 0 { close(poller) }
    }
}
