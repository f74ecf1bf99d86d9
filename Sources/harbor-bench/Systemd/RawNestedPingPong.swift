// Harbor — the raw shape of a nested loop: the floor's ping-pong with the server's eventfd behind layers of epoll sets.
import CHarborLinux
import Glibc

/// The eventfd ping-pong of the floor, but the server's eventfd sits where a
/// Harbor port's does: in an epoll set (the port's readiness descriptor),
/// inside the mode's epoll set. `inHost` adds the host's level: the server
/// sleeps in a third epoll set holding the mode's (sd-event's), then takes
/// the events from the mode's set with a non-blocking `epoll_wait`, as a
/// nested Harbor pass does. No Harbor or sd-event code runs: the difference
/// between the two is what the kernel charges for nesting.
final class RawNestedPingPong: BenchmarkVariant {
    let name: String
    let label: String
    private let inHost: Bool
    private let server: SharedServerThread
    // [serverEvent, portSet, modeSet, hostSet, clientEvent, clientEpoll], -1 until start().
    private var fds: [CInt] = Array(repeating: -1, count: 6)

    init(inHost: Bool, server: SharedServerThread) {
        self.inHost = inHost
        self.server = server
        name = inHost ? "raw-in-host" : "raw-alone"
        label = inHost
            ? "eventfd in epoll in epoll in epoll; epoll_wait(mode, 0) after waking"
            : "eventfd in epoll in epoll (a port in a mode's waitset)"
    }

    func start() throws {
        func check(_ value: CInt, _ call: String) throws -> CInt {
            guard value >= 0 else { throw BenchmarkFailure("\(call): errno \(charbor_errno())") }
            return value
        }
        func watch(_ set: CInt, _ fd: CInt) throws {
            var registration = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 1))
            _ = try check(epoll_ctl(set, EPOLL_CTL_ADD, fd, &registration), "epoll_ctl")
        }
        let flags = Int32(charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK)
        for index in [0, 4] { fds[index] = try check(eventfd(0, flags), "eventfd") }
        for index in [1, 2, 3, 5] { fds[index] = try check(epoll_create1(Int32(charbor_EPOLL_CLOEXEC)), "epoll_create1") }
        try watch(fds[1], fds[0])
        try watch(fds[2], fds[1])
        try watch(fds[3], fds[2])
        try watch(fds[5], fds[4])
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let (modeSet, hostSet) = (fds[2], fds[3])
        let inHost = self.inHost
        eventfdPingPong(server: server, serverEvent: fds[0], clientEvent: fds[4], clientEpoll: fds[5],
                        iterations: iterations, warmUp: warmUp, into: &samples) {
            var events = (epoll_event(), epoll_event(), epoll_event(), epoll_event())
            return withUnsafeMutableBytes(of: &events) { raw -> Bool in
                let buffer = raw.bindMemory(to: epoll_event.self)
                if inHost {
                    guard epoll_wait(hostSet, buffer.baseAddress, 1, -1) == 1 else { return false }
                    return epoll_wait(modeSet, buffer.baseAddress, CInt(buffer.count), 0) >= 1
                }
                return epoll_wait(modeSet, buffer.baseAddress, CInt(buffer.count), -1) >= 1
            }
        }
    }

    func stop() {
        for fd in fds where fd >= 0 { close(fd) }
        fds = Array(repeating: -1, count: 6)
    }
}
