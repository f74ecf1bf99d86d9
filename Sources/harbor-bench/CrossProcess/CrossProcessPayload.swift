// Harbor — benchmark: delivering a large payload to another process, Harbor beside the two raw ways.
import Glibc

/// One payload of `size` bytes to a peer that checksums every byte and
/// answers with the sum: Harbor's out-of-line buffer (filled in place) and
/// `Message(id:payload:)` beside copying through a socket and a raw memfd.
struct CrossProcessPayload: Benchmark {
    let size: Int
    var name: String { "cross-process-payload-" + Self.label(size) }
    var summary: String { "a \(Self.label(size)) payload to another process, checksummed there" }
    let unit = "payload"
    var iterations: (full: Int, quick: Int) {
        switch size {
        case ..<(1 << 20): (200, 50)
        case ..<(16 << 20): (40, 10)
        case ..<(256 << 20): (6, 2)
        default: (2, 1)
        }
    }
    var rounds: (full: Int, quick: Int)? { size >= 256 << 20 ? (3, 1) : size >= 16 << 20 ? (8, 2) : (15, 3) }
    var warmUp: Int? { size >= 16 << 20 ? 1 : nil }

    static func label(_ size: Int) -> String { size >= 1 << 20 ? "\(size >> 20)m" : "\(size >> 10)k" }

    var notes: [String] {
        [
            "Every variant: the sender writes the payload (memset of one byte value, new each time) into memory it "
                + "got, hands it over, and waits for the peer's 8-byte checksum of all bytes (wrapping sum of "
                + "64-bit words, so the receiver reads every byte); the sample ends when the checksum is back "
                + "and verified.",
            "chunks (floor): memset a reused \(Self.label(size)) buffer, blocking write() of it to a SOCK_STREAM "
                + "pair (4 MiB socket buffers; the kernel chunks it); the peer read()s it whole into a reused buffer "
                + "of its own, then sums it.",
            "chunks-streaming (reference, not a floor): the same writes; the peer read()s 1 MiB at a time and sums "
                + "each chunk while it is in the cache, never holding the payload (no message transport can).",
            "memfd: memset the reused buffer, memfd_create, write() it in, seal (write, shrink, grow), send the "
                + "descriptor in SCM_RIGHTS; the peer checks the seals, mmaps read-only, sums, unmaps.",
            "harbor (Harbor's default path): Message(id:payloadCount:) hands out Harbor's memory, memset fills it "
                + "in place (the inline body up to 64 KiB, else recycled private memory that crosses the connection "
                + "in fragments of up to 96 KiB), send; the peer sums the region or the body.",
            "harbor-copy: memset the reused buffer, Message(id:payload:) copies it into the same kinds of memory, send.",
            "harbor-ool: OutOfLineBuffer(count:) filled in place (a memfd, sealed on attach), message.attach(buffer), "
                + "send; the peer maps it read-only and sums message.regions[0].",
            "× best raw: Harbor's median over the better raw median of the run (the target is ≤ 1.11, i.e. at "
                + "least 0.9 × the better raw speed).",
        ]
    }

    func makeVariants() throws -> [any BenchmarkVariant] {
        let link = try PeerLink()
        let source = PayloadSource(size: size)
        return [
            ChunkedCopy(link: link, source: source),
            ChunkedCopy(link: link, source: source, streaming: true),
            RawMemfd(link: link, source: source),
            HarborPayload(link: link, source: source, way: .memfd),
            HarborPayload(link: link, source: source, way: .copied),
            HarborPayload(link: link, source: source, way: .inPlace),
        ]
    }
}

/// The sender's reused buffer (pages touched once), and the byte value of
/// the next payload, so no receiver can pass by summing stale bytes.
final class PayloadSource {
    let size: Int
    let bytes: UnsafeMutableRawPointer
    private var counter = 0

    init(size: Int) {
        self.size = size
        bytes = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
        memset(bytes, 1, size)
    }

    deinit { bytes.deallocate() }

    func nextByte() -> UInt8 {
        counter += 1
        return UInt8(counter % 250 + 1)
    }

    func check(_ sum: UInt64, byte: UInt8) throws {
        guard sum == expectedChecksum(byte: byte, count: size) else { throw BenchmarkFailure("checksum mismatch") }
    }
}
