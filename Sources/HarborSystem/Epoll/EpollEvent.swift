// Harbor — epoll's event record for code above the system-call layer, and
// the calls on an epoll set that code reaches by number.
import CHarborLinux
import Glibc
import Synchronization

/// One entry of an `epoll_wait` buffer. Read it through ``token`` and
/// ``readiness``, so code above `System/` needs no C module.
package typealias EpollEvent = epoll_event

extension EpollEvent {
    /// The 64-bit token the descriptor was registered with.
    package var token: UInt64 { data.u64 }
    /// The ready bits (`EPOLLIN`, …), as ``EpollEvents`` raw values.
    package var readiness: UInt32 { events }
    /// An entry with no events and token 0, for a buffer to fill.
    package static var empty: EpollEvent { epoll_event() }
}

extension EpollControl {
    /// C: `epoll_ctl(EPOLL_CTL_MOD)`.
    package static func modify(_ epollFD: CInt, _ fd: CInt, events: EpollEvents, token: UInt64) throws(SystemError) {
        var event = epoll_event(events: events.rawValue, data: epoll_data_t(u64: token))
        _ = try systemCall("epoll_ctl(MOD)") { epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
    }

    /// Takes up to four ready events and drops them: consumes the
    /// edge-triggered wake-up that made a nested set readable.
    /// C: `epoll_wait(timeout 0)`.
    package static func discardReady(_ epollFD: CInt) {
        var events = (epoll_event(), epoll_event(), epoll_event(), epoll_event())
        withUnsafeMutableBytes(of: &events) { raw in
            _ = poll(epollFD, into: raw.bindMemory(to: epoll_event.self))
        }
    }

    /// Waits for readiness on `epollFD` with a nanosecond-precise timeout
    /// (`nil` waits forever) and fills `buffer` from the front; returns how
    /// many entries are valid, 0 when a signal interrupted the wait.
    /// The one wrapper of `epoll_pwait2(2)` (Linux 5.11). Where the kernel or
    /// a tool (valgrind 3.19) lacks it, `epoll_wait` with the timeout rounded
    /// up to whole milliseconds, so a deadline is never woken early.
    @inline(never)
    package static func wait(
        _ epollFD: CInt, into buffer: UnsafeMutableBufferPointer<epoll_event>, timeout: timespec?
    ) throws(SystemError) -> Int {
        var count: CInt = -1
        if !pwait2Missing.load(ordering: .relaxed) {
            if var spec = timeout {
                count = charbor_epoll_pwait2(epollFD, buffer.baseAddress, CInt(buffer.count), &spec)
            } else {
                count = charbor_epoll_pwait2(epollFD, buffer.baseAddress, CInt(buffer.count), nil)
            }
            if count < 0 && charbor_errno() == ENOSYS { pwait2Missing.store(true, ordering: .relaxed) }
        }
        if pwait2Missing.load(ordering: .relaxed) {
            count = epoll_wait(epollFD, buffer.baseAddress, CInt(buffer.count), timeout.map(wholeMilliseconds) ?? -1)
        }
        if count >= 0 { return Int(count) }
        let code = charbor_errno()
        if code == EINTR { return 0 }
        throw SystemError(errno: code, call: "epoll_pwait2")
    }

    /// `timeout` in milliseconds, rounded up, at most `Int32.max`.
    private static func wholeMilliseconds(_ timeout: timespec) -> CInt {
        let total = Int64(timeout.tv_sec) * 1000 + (Int64(timeout.tv_nsec) + 999_999) / 1_000_000
        return CInt(clamping: total)
    }
}

/// Whether `epoll_pwait2` answered `ENOSYS` once: it is not tried again.
private let pwait2Missing = Atomic<Bool>(false)
