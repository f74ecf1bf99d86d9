// Harbor — the payload floor: copying the bytes through a stream socket.
import CHarborLinux
import Glibc

///
/// Two receivers. The floor's reads the whole payload into one buffer of
/// its own (reused, its pages touched before the first sample) and then sums
/// it: the job every other variant does, a payload whole in the receiver's
/// memory before it is read. `chunks-streaming` sums each 1 MiB chunk while
/// it is still in the cache and never holds the payload; no message transport
/// can do that, so it is printed for reference and is not a floor.
final class ChunkedCopy: BenchmarkVariant {
    let name: String
    let label: String
    let isFloor: Bool
    private let link: PeerLink
    private let source: PayloadSource
    private let job: PeerJob

    init(link: PeerLink, source: PayloadSource, streaming: Bool = false) {
        self.link = link
        self.source = source
        isFloor = !streaming
        job = streaming ? .chunksStreaming : .chunks
        name = streaming ? "chunks-streaming" : "chunks"
        label = streaming
            ? "raw write() through a SOCK_STREAM pair, peer read()s 1 MiB chunks and sums each at once (reference)"
            : "raw write() through a SOCK_STREAM pair, peer read()s it whole into its buffer, then sums"
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(job, count: warmUp + iterations, size: source.size)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            let byte = source.nextByte()
            memset(source.bytes, Int32(byte), source.size)
            Raw.writeAll(link.stream, source.bytes, source.size)
            var sum: UInt64 = 0
            guard read(link.stream, &sum, 8) == 8 else { throw BenchmarkFailure("checksum read: errno \(charbor_errno())") }
            try source.check(sum, byte: byte)
        }
        try link.end()
    }

    func stop() {}
}
