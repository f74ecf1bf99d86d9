// Harbor — the cross-process floor: SOCK_SEQPACKET ping-pong, each side sleeping in epoll_wait.
import CHarborLinux
import Glibc

/// What a cross-process request/reply costs with nothing but a socket pair:
/// per side one `send`, one `epoll_wait`, one `recv`.
/// With `passCredentials`, the same on a pair with SO_PASSCRED set, received
/// with `recvmsg` and a control buffer: the floor for a transport that, like
/// Harbor, reports the kernel-attested sender (not the floor of the ratio).
final class SeqPacketPingPong: BenchmarkVariant {
    let name: String
    let label: String
    let isFloor: Bool
    private let link: PeerLink
    private let size: Int
    private let passCredentials: Bool
    private let buffer: UnsafeMutableRawPointer
    private let control = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)

    init(link: PeerLink, size: Int, passCredentials: Bool = false) {
        self.link = link
        self.size = size
        self.passCredentials = passCredentials
        isFloor = !passCredentials
        name = passCredentials ? "floor-passcred" : "floor"
        label = passCredentials ? "floor with SO_PASSCRED, recvmsg with control buffer, each side"
            : "raw SEQPACKET send + epoll_wait + recv, each side"
        buffer = UnsafeMutableRawPointer.allocate(byteCount: max(size, 64), alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: 7, count: max(size, 64))
    }

    deinit {
        buffer.deallocate()
        control.deallocate()
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(passCredentials ? .floorPassCred : .floorPingPong, count: warmUp + iterations)
        let (socket, set) = passCredentials ? (link.pingCred, link.pingCredSet) : (link.ping, link.pingSet)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            guard send(socket, buffer, size, Int32(charbor_MSG_NOSIGNAL)) == size else {
                throw BenchmarkFailure("send: errno \(charbor_errno())")
            }
            Raw.waitReady(set)
            let received = passCredentials ? Raw.receiveWithCredentials(socket, buffer, size, control: control)
                : recv(socket, buffer, size, 0)
            guard received == size else { throw BenchmarkFailure("recv: errno \(charbor_errno())") }
        }
        try link.end()
    }

    func stop() {}
}
