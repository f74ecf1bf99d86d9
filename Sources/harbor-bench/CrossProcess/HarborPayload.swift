// Harbor — Harbor's ways to deliver a large payload: filled in place in
// Harbor's memory (the default), copied from the caller's, or a sealed memfd.
import Glibc
import Harbor

final class HarborPayload: BenchmarkVariant {
    /// How the payload gets into the message.
    enum Way {
        /// `Message(id:payloadCount:initializingWith:)`: written in place.
        case inPlace
        /// `Message(id:payload:)`: written into the caller's buffer, then copied.
        case copied
        /// `OutOfLineBuffer` (a memfd) written in place, sealed on attach.
        case memfd
    }

    let name: String
    let label: String
    private let way: Way
    private let link: PeerLink
    private let source: PayloadSource

    init(link: PeerLink, source: PayloadSource, way: Way) {
        self.link = link
        self.source = source
        self.way = way
        switch way {
        case .inPlace:
            name = "harbor"
            label = "Message(id:payloadCount:) filled in place by memset (inline, or private memory sent in fragments)"
        case .copied:
            name = "harbor-copy"
            label = "memset reused buffer, Message(id:payload:) copies it, send"
        case .memfd:
            name = "harbor-ool"
            label = "OutOfLineBuffer filled in place (sealed memfd), attach, send"
        }
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.harborPayload, count: warmUp + iterations, size: source.size)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            let byte = source.nextByte()
            let message: Message
            switch way {
            case .inPlace:
                message = try Message(id: 1, payloadCount: source.size) { bytes in
                    _ = memset(bytes.baseAddress!, Int32(byte), bytes.count)
                }
            case .copied:
                memset(source.bytes, Int32(byte), source.size)
                message = try Message(id: 1, payload: UnsafeRawBufferPointer(start: source.bytes, count: source.size))
            case .memfd:
                var buffer = try OutOfLineBuffer(count: source.size)
                _ = buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: byte) }
                var attached = Message(id: 1)
                try attached.attach(buffer)
                message = attached
            }
            try link.toPeer.send(message)
            let reply = try link.home.receive()
            let sum = reply.body.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            try source.check(sum, byte: byte)
        }
        try link.end()
    }

    func stop() {}
}
