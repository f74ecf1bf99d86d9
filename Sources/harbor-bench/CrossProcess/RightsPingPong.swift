// Harbor — the floor for carrying a right: a fresh socket end passed in SCM_RIGHTS and answered through.
import CHarborLinux
import Glibc

final class RightsPingPong: BenchmarkVariant {
    let name = "floor"
    let label = "raw socketpair + SCM_RIGHTS; peer replies through the passed socket"
    let isFloor = true
    private let link: PeerLink
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)

    init(link: PeerLink) {
        self.link = link
        buffer.initializeMemory(as: UInt8.self, repeating: 7, count: 64)
    }

    deinit { buffer.deallocate() }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.floorRights, count: warmUp + iterations)
        let set = epoll_create1(Int32(charbor_EPOLL_CLOEXEC))
        defer { close(set) }
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            var pair: [CInt] = [-1, -1]
            guard socketpair(AF_UNIX, Raw.seqPacket | Int32(charbor_SOCK_CLOEXEC), 0, &pair) == 0 else {
                throw BenchmarkFailure("socketpair: errno \(charbor_errno())")
            }
            var registration = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 1))
            epoll_ctl(set, EPOLL_CTL_ADD, pair[0], &registration)
            guard Raw.sendWithDescriptor(link.ping, buffer, 64, descriptor: pair[1]) else {
                throw BenchmarkFailure("sendmsg: errno \(charbor_errno())")
            }
            close(pair[1])
            Raw.waitReady(set)
            guard recv(pair[0], buffer, 64, 0) == 64 else { throw BenchmarkFailure("recv: errno \(charbor_errno())") }
            close(pair[0])
        }
        try link.end()
    }

    func stop() {}
}
