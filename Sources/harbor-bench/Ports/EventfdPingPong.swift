// Harbor — the floor: two threads ping-ponging over eventfds, each sleeping in epoll_wait.
import CHarborLinux
import Glibc

/// The least a cross-thread request/reply can cost on Linux with a
/// descriptor-based wake-up: per side one `write` to the other's eventfd,
/// one `epoll_wait`, one `read` of its own. No Harbor code runs.
final class EventfdPingPong: BenchmarkVariant {
    let name = "floor"
    let label = "raw eventfd write + epoll_wait + read, each side"
    let isFloor = true
    private let server: SharedServerThread
    // [serverEvent, serverEpoll, clientEvent, clientEpoll], -1 until start().
    private var fds: [CInt] = [-1, -1, -1, -1]

    init(server: SharedServerThread) { self.server = server }

    func start() throws {
        for pair in [0, 2] {
            let event = eventfd(0, Int32(charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK))
            let poller = epoll_create1(Int32(charbor_EPOLL_CLOEXEC))
            guard event >= 0, poller >= 0 else { throw BenchmarkFailure("eventfd/epoll_create1: errno \(charbor_errno())") }
            var registration = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 1))
            guard epoll_ctl(poller, EPOLL_CTL_ADD, event, &registration) == 0 else {
                throw BenchmarkFailure("epoll_ctl: errno \(charbor_errno())")
            }
            fds[pair] = event
            fds[pair + 1] = poller
        }
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let serverEpoll = fds[1]
        eventfdPingPong(server: server, serverEvent: fds[0], clientEvent: fds[2], clientEpoll: fds[3],
                        iterations: iterations, warmUp: warmUp, into: &samples) {
            var event = epoll_event()
            return epoll_wait(serverEpoll, &event, 1, -1) == 1
        }
    }

    func stop() {
        for fd in fds where fd >= 0 { close(fd) }
        fds = [-1, -1, -1, -1]
    }
}

/// Every eventfd floor's round trips: the server thread sleeps in
/// `serverWaits` (false: woke for nothing, wait again), reads its eventfd and
/// wakes the client's; the client wakes the server's eventfd, sleeps in
/// `epoll_wait` until it wakes ours, reads it; one sample per round trip after
/// `warmUp`. Ends by writing 2, which tells the server thread to return, and
/// waits until it did.
func eventfdPingPong(
    server: SharedServerThread, serverEvent: CInt, clientEvent: CInt, clientEpoll: CInt,
    iterations: Int, warmUp: Int, into samples: inout [Int64], serverWaits: @escaping @Sendable () -> Bool
) {
    server.thread.start {
        var value: UInt64 = 0
        while true {
            if !serverWaits() { continue }
            if read(serverEvent, &value, 8) != 8 { continue }
            if value >= 2 { return }
            value = 1
            _ = write(clientEvent, &value, 8)
        }
    }
    var event = epoll_event()
    var value: UInt64 = 0
    measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
        value = 1
        _ = write(serverEvent, &value, 8)
        while epoll_wait(clientEpoll, &event, 1, -1) != 1 {}
        _ = read(clientEvent, &value, 8)
    }
    value = 2
    _ = write(serverEvent, &value, 8)
    server.thread.waitUntilIdle()
}
