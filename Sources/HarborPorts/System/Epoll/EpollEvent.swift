// Harbor — epoll's event record for code above the system-call layer, and
// the calls on an epoll set that code reaches by number.
import CHarborLinux
import Glibc

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
    /// The one wrapper of `epoll_pwait2(2)` (Linux 5.11; the shim falls back
    /// to `epoll_wait`, rounding the timeout up).
    @inline(never)
    package static func wait(
        _ epollFD: CInt, into buffer: UnsafeMutableBufferPointer<epoll_event>, timeout: timespec?
    ) throws(SystemError) -> Int {
        let count: Int
        if var spec = timeout {
            count = Int(charbor_epoll_pwait2(epollFD, buffer.baseAddress, CInt(buffer.count), &spec))
        } else {
            count = Int(charbor_epoll_pwait2(epollFD, buffer.baseAddress, CInt(buffer.count), nil))
        }
        if count >= 0 { return count }
        let code = charbor_errno()
        if code == EINTR { return 0 }
        throw SystemError(errno: code, call: "epoll_pwait2")
    }
}
