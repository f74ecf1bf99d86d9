// Harbor — the payload floor: copying the bytes through a stream socket.
import CHarborLinux
import Glibc

final class ChunkedCopy: BenchmarkVariant {
    let name = "chunks"
    let label = "raw write() through a SOCK_STREAM pair, peer read()s 1 MiB chunks"
    let isFloor = true
    private let link: PeerLink
    private let source: PayloadSource

    init(link: PeerLink, source: PayloadSource) {
        self.link = link
        self.source = source
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.chunks, count: warmUp + iterations, size: source.size)
        for index in 0..<(warmUp + iterations) {
            let started = nowNanoseconds()
            let byte = source.nextByte()
            memset(source.bytes, Int32(byte), source.size)
            Raw.writeAll(link.stream, source.bytes, source.size)
            var sum: UInt64 = 0
            guard read(link.stream, &sum, 8) == 8 else { throw BenchmarkFailure("checksum read: errno \(charbor_errno())") }
            try source.check(sum, byte: byte)
            if index >= warmUp { samples.append(nowNanoseconds() - started) }
        }
        try link.end()
    }

    func stop() {}
}
