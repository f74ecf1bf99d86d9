// Harbor — sd-bus's request/reply across processes: one method call over a direct connection.
import Glibc

/// `sd_bus_call` of a method that returns its `ay` argument, against an
/// sd-bus server in the peer process (no dbus-daemon in between).
final class SDBusRoundTrip: BenchmarkVariant {
    let name = "sdbus"
    let label = "sd-bus direct connection, sd_bus_call echoing `ay`"
    private let link: PeerLink
    private let payload: UnsafeMutableRawBufferPointer
    private var client: SDBusClient?

    init(link: PeerLink, size: Int) {
        self.link = link
        payload = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        payload.initializeMemory(as: UInt8.self, repeating: 7)
    }

    deinit { payload.deallocate() }

    func start() throws {
        // The client owns (and closes) a duplicate; the link closes its own.
        client = try SDBusClient(fd: dup(link.sdbus))
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let client else { throw BenchmarkFailure("measure before start") }
        link.begin(.sdbusEcho, count: warmUp + iterations)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            guard try client.call(UnsafeRawBufferPointer(payload)) == payload.count else {
                throw BenchmarkFailure("short sd-bus reply")
            }
        }
        try link.end()
    }

    func stop() { client = nil }
}
