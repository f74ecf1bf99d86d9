// Harbor — Harbor's ways to deliver a large payload: an out-of-line buffer filled in place, or Message(id:payload:).
import Glibc
import Harbor

final class HarborPayload: BenchmarkVariant {
    let name: String
    let label: String
    private let inPlace: Bool
    private let link: PeerLink
    private let source: PayloadSource

    init(link: PeerLink, source: PayloadSource, inPlace: Bool) {
        self.link = link
        self.source = source
        self.inPlace = inPlace
        // "harbor" is the path Harbor picks by default for a payload.
        name = inPlace ? "harbor-ool" : "harbor"
        label = inPlace ? "OutOfLineBuffer filled in place (sealed memfd), attach, send"
            : "memset reused buffer, Message(id:payload:) (inline, or a copy sent in fragments), send"
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.harborPayload, count: warmUp + iterations, size: source.size)
        for index in 0..<(warmUp + iterations) {
            let started = nowNanoseconds()
            let byte = source.nextByte()
            var message: Message
            if inPlace {
                var buffer = try OutOfLineBuffer(count: source.size)
                _ = buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: byte) }
                message = Message(id: 1)
                try message.attach(buffer)
            } else {
                memset(source.bytes, Int32(byte), source.size)
                message = try Message(id: 1, payload: UnsafeRawBufferPointer(start: source.bytes, count: source.size))
            }
            try link.toPeer.send(message)
            let reply = try link.home.receive()
            let sum = reply.body.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            try source.check(sum, byte: byte)
            if index >= warmUp { samples.append(nowNanoseconds() - started) }
        }
        try link.end()
    }

    func stop() {}
}
