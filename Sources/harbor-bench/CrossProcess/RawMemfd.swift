// Harbor — the other raw way for a payload: a fresh sealed memfd passed in SCM_RIGHTS.
import CHarborLinux
import Glibc

final class RawMemfd: BenchmarkVariant {
    let name = "memfd"
    let label = "raw memfd_create + write() + seal, SCM_RIGHTS; peer mmaps read-only"
    let isRaw = true
    private let link: PeerLink
    private let source: PayloadSource

    init(link: PeerLink, source: PayloadSource) {
        self.link = link
        self.source = source
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.rawMemfd, count: warmUp + iterations, size: source.size)
        let seals = charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            let byte = source.nextByte()
            memset(source.bytes, Int32(byte), source.size)
            let file = charbor_memfd_create("bench", UInt32(charbor_MFD_CLOEXEC | charbor_MFD_ALLOW_SEALING))
            guard file >= 0 else { throw BenchmarkFailure("memfd_create: errno \(charbor_errno())") }
            Raw.writeAll(file, source.bytes, source.size)
            guard fcntl(file, charbor_F_ADD_SEALS, seals) == 0 else { throw BenchmarkFailure("seal: errno \(charbor_errno())") }
            var tag: UInt8 = 1
            guard Raw.sendWithDescriptor(link.ping, &tag, 1, descriptor: file) else {
                throw BenchmarkFailure("sendmsg: errno \(charbor_errno())")
            }
            close(file)
            Raw.waitReady(link.pingSet)
            var sum: UInt64 = 0
            guard recv(link.ping, &sum, 8, 0) == 8 else { throw BenchmarkFailure("recv: errno \(charbor_errno())") }
            try source.check(sum, byte: byte)
        }
        try link.end()
    }

    func stop() {}
}
