// Harbor — the cross-process floor: SOCK_SEQPACKET ping-pong, each side sleeping in epoll_wait.
import CHarborLinux
import Glibc

/// What a cross-process request/reply costs with nothing but a socket pair:
/// per side one `send`, one `epoll_wait`, one `recv`.
final class SeqPacketPingPong: BenchmarkVariant {
    let name = "floor"
    let label = "raw SEQPACKET send + epoll_wait + recv, each side"
    let isFloor = true
    private let link: PeerLink
    private let size: Int
    private let buffer: UnsafeMutableRawPointer

    init(link: PeerLink, size: Int) {
        self.link = link
        self.size = size
        buffer = UnsafeMutableRawPointer.allocate(byteCount: max(size, 64), alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: 7, count: max(size, 64))
    }

    deinit { buffer.deallocate() }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.floorPingPong, count: warmUp + iterations)
        for index in 0..<(warmUp + iterations) {
            let started = nowNanoseconds()
            guard send(link.ping, buffer, size, Int32(charbor_MSG_NOSIGNAL)) == size else {
                throw BenchmarkFailure("send: errno \(charbor_errno())")
            }
            Raw.waitReady(link.pingSet)
            guard recv(link.ping, buffer, size, 0) == size else { throw BenchmarkFailure("recv: errno \(charbor_errno())") }
            if index >= warmUp { samples.append(nowNanoseconds() - started) }
        }
        try link.end()
    }

    func stop() {}
}
