// Harbor — epoll(7): the waitset every port set and run-loop mode is made of.
import CHarborLinux
import Glibc
import SystemPackage

/// Readiness kinds, spelled in Swift. C: the `EPOLL*` event bits.
package struct EpollEvents: OptionSet, Hashable, Sendable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    package static let readable = EpollEvents(rawValue: EPOLLIN.rawValue)
    package static let writable = EpollEvents(rawValue: EPOLLOUT.rawValue)
    package static let readHangUp = EpollEvents(rawValue: EPOLLRDHUP.rawValue)
    package static let hangUp = EpollEvents(rawValue: EPOLLHUP.rawValue)
    package static let error = EpollEvents(rawValue: EPOLLERR.rawValue)
    package static let edgeTriggered = EpollEvents(rawValue: EPOLLET.rawValue)
    package static let oneShot = EpollEvents(rawValue: EPOLLONESHOT.rawValue)
}

/// One ready descriptor as `epoll_wait` reported it: its token and its events.
package struct EpollReadiness: Sendable {
    package var token: UInt64
    package var events: EpollEvents
}

/// An owned epoll set. Itself a descriptor, so sets nest: a port set inside a
/// run-loop mode, a run loop inside sd-event.
///
/// Each registration carries a 64-bit token chosen by the caller; Harbor's
/// tokens include a generation so that an event for a closed and reused
/// descriptor number is recognised as stale (NIO's registration IDs).
///
/// **Thread safety:** `add`, `modify`, `remove` and `wait` may be called from
/// any thread, as the kernel allows.
package struct Epoll: ~Copyable, Sendable {
    package let descriptor: OwnedDescriptor

    /// C: `epoll_create1(EPOLL_CLOEXEC)`.
    package init() throws(SystemError) {
        let fd = try systemCall("epoll_create1") { epoll_create1(Int32(charbor_EPOLL_CLOEXEC)) }
        descriptor = OwnedDescriptor(taking: fd)
    }

    package var rawValue: CInt { descriptor.rawValue }

    /// C: `epoll_ctl(EPOLL_CTL_ADD)`.
    @inline(never)
    package func add(_ fd: CInt, events: EpollEvents, token: UInt64) throws(SystemError) {
        var event = epoll_event(events: events.rawValue, data: epoll_data_t(u64: token))
        _ = try systemCall("epoll_ctl(ADD)") { epoll_ctl(rawValue, EPOLL_CTL_ADD, fd, &event) }
    }

    /// C: `epoll_ctl(EPOLL_CTL_MOD)`.
    @inline(never)
    package func modify(_ fd: CInt, events: EpollEvents, token: UInt64) throws(SystemError) {
        var event = epoll_event(events: events.rawValue, data: epoll_data_t(u64: token))
        _ = try systemCall("epoll_ctl(MOD)") { epoll_ctl(rawValue, EPOLL_CTL_MOD, fd, &event) }
    }

    /// C: `epoll_ctl(EPOLL_CTL_DEL)`. A descriptor that is already closed (and
    /// so already gone from the set) is not an error.
    @inline(never)
    package func remove(_ fd: CInt) throws(SystemError) {
        var event = epoll_event()
        do {
            _ = try systemCall("epoll_ctl(DEL)") { epoll_ctl(rawValue, EPOLL_CTL_DEL, fd, &event) }
        } catch where error.errno == .noSuchFileOrDirectory || error.errno == .badFileDescriptor {
            return
        }
    }

    /// Waits for readiness and fills `buffer` from the front; returns how many
    /// entries are valid. A signal interrupting the wait returns 0 (the caller
    /// re-checks its own state and waits again), as NIO does.
    ///
    /// - Parameter timeoutMilliseconds: -1 waits forever, 0 polls.
    /// C: `epoll_wait(2)`.
    @inline(never)
    package func wait(
        into buffer: UnsafeMutableBufferPointer<epoll_event>,
        timeoutMilliseconds: CInt
    ) throws(SystemError) -> Int {
        let count = epoll_wait(rawValue, buffer.baseAddress, CInt(buffer.count), timeoutMilliseconds)
        if count >= 0 { return Int(count) }
        let code = charbor_errno()
        if code == EINTR { return 0 }
        throw SystemError(errno: code, call: "epoll_wait")
    }

    /// Like ``wait(into:timeoutMilliseconds:)`` with a nanosecond-precise
    /// timeout (`nil` waits forever). C: `epoll_pwait2(2)` (Linux 5.11).
    @inline(never)
    package func wait(
        into buffer: UnsafeMutableBufferPointer<epoll_event>,
        timeout: timespec?
    ) throws(SystemError) -> Int {
        try EpollControl.wait(rawValue, into: buffer, timeout: timeout)
    }
}
