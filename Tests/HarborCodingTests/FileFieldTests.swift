// Harbor — C07: file descriptors as Codable fields and in messages, carried
// as themselves, owned by the message until taken, closed when nobody does.
import Foundation
import HarborCoding
import HarborPorts
import HarborTestSupport
import SystemPackage
import Testing

@Suite(.deadline(.seconds(60)))
struct FileFieldTests {
    struct OpenLog: Codable {
        var name: String
        var output: FileDescriptorCarrier
        var spare: [FileDescriptorCarrier]
    }

    /// Reads what is waiting in a pipe (at most 256 bytes), as text.
    static func drain(_ readEnd: FileDescriptor) throws -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = try buffer.withUnsafeMutableBytes { try readEnd.read(into: $0) }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    @Test func C07_aFileAsACodableFieldIsCarriedAsItselfAndWorksAfterDecoding() throws {
        try expectNoDescriptorLeak {
            let pipe = try FileDescriptor.pipe()
            defer { try? pipe.readEnd.close(); try? pipe.writeEnd.close() }
            let value = OpenLog(name: "audit", output: try FileDescriptorCarrier(duplicating: pipe.writeEnd),
                                spare: [try FileDescriptorCarrier(duplicating: pipe.writeEnd)])
            let service = ReceiveRight()
            let sent = try MessageEncoder().encode(value, id: 9)
            let carried = sent.carriedFileCount
            #expect(carried == 2, "each carrier a carried file, not bytes")
            #expect(!value.output.isTaken, "encoding gives the message a duplicate; the carrier keeps its own")
            try service.makeSendRight().send(sent)

            var received = try service.receive(timeout: .seconds(5))
            let decoded = try MessageDecoder().decode(OpenLog.self, from: &received)
            let bothTaken = received.isFileTaken(at: 0) && received.isFileTaken(at: 1)
            #expect(bothTaken, "decoding took both out")
            #expect(decoded.name == "audit")
            let output = try decoded.output.take()
            defer { try? output.close() }
            _ = try output.writeAll(Array("through the carried file".utf8))
            #expect(try Self.drain(pipe.readEnd) == "through the carried file")
        }
    }

    @Test func C07_aMessageCarriesFilesAndTheReceiverTakesEachOnce() throws {
        try expectNoDescriptorLeak {
            let pipe = try FileDescriptor.pipe()
            defer { try? pipe.readEnd.close(); try? pipe.writeEnd.close() }
            var message = Message(id: 3, text: "with a file")
            try message.attach(pipe.writeEnd)
            let port = ReceiveRight()
            try port.makeSendRight().send(message)
            var received = try port.receive(timeout: .seconds(5))
            let count = received.carriedFileCount
            #expect(count == 1)
            let file = try received.takeFileDescriptor(at: 0)
            defer { try? file.close() }
            #expect(throws: PortError.self) { _ = try received.takeFileDescriptor(at: 0) }
            #expect(throws: PortError.self) { _ = try received.takeFileDescriptor(at: 1) }
            _ = try file.writeAll(Array("taken".utf8))
            #expect(try Self.drain(pipe.readEnd) == "taken")

            let carrier = try FileDescriptorCarrier(duplicating: pipe.writeEnd)
            let taken = try carrier.take()
            try taken.close()
            #expect(carrier.isTaken)
            expectCodingError(.rightAlreadyTaken) { _ = try carrier.take() }
            expectCodingError(.rightAlreadyTaken) { _ = try MessageEncoder().encode([carrier], id: 1) }
        }
    }

    @Test func C07_filesNobodyTakesAreClosedWithTheirMessage() throws {
        let pipe = try FileDescriptor.pipe()
        defer { try? pipe.readEnd.close(); try? pipe.writeEnd.close() }
        let before = openDescriptorCount()
        do {
            // Received and dropped untaken.
            let port = ReceiveRight()
            let attaching = openDescriptorCount()
            var message = Message(id: 1)
            for _ in 0..<5 { try message.attach(pipe.writeEnd) }
            #expect(openDescriptorCount() == attaching + 5, "the message holds its own duplicates")
            try port.makeSendRight().send(message)
            _ = try port.receive(timeout: .seconds(5))
            // Decoded into a carrier nobody takes.
            let value = OpenLog(name: "x", output: try FileDescriptorCarrier(duplicating: pipe.writeEnd), spare: [])
            try port.makeSendRight().send(try MessageEncoder().encode(value, id: 2))
            _ = try MessageDecoder().decode(OpenLog.self, from: try port.receive(timeout: .seconds(5)))
            // Queued on a port that is destroyed.
            var queued = Message(id: 3)
            try queued.attach(pipe.writeEnd)
            try port.makeSendRight().send(queued)
        }
        #expect(openDescriptorCount() == before, "every carried file closed once its message went")
        // With every write end but ours closed, a write still works; with ours closed, the pipe ends.
        try pipe.writeEnd.close()
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try buffer.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) } == 0,
                "no copy of the write end is left open anywhere")
    }

    @Test func C07_filesStopAtTheMessageLimit() throws {
        let pipe = try FileDescriptor.pipe()
        defer { try? pipe.readEnd.close(); try? pipe.writeEnd.close() }
        var message = Message(id: 1)
        for _ in 0..<Message.maximumCarriedFiles { try message.attach(pipe.writeEnd) }
        #expect(throws: PortError.self) { try message.attach(pipe.writeEnd) }
        let many = try (0...Message.maximumCarriedFiles).map { _ in try FileDescriptorCarrier(duplicating: pipe.writeEnd) }
        expectCodingError(.limitExceeded) { _ = try MessageEncoder().encode(many, id: 1) }
    }

    @Test func C04_C07_aFileIndexOutOfRangeOrNamedTwiceIsRefused() throws {
        let pipe = try FileDescriptor.pipe()
        defer { try? pipe.readEnd.close(); try? pipe.writeEnd.close() }
        // Version 1, an array of two files, both index 0: named twice.
        var twice = Message(id: 1, body: [1, 0x09, 2, 0x0F, 0, 0x0F, 0])
        try twice.attach(pipe.writeEnd)
        expectCodingError(.invalidRightIndex) { _ = try MessageDecoder().decode([FileDescriptorCarrier].self, from: &twice) }
        let kept = !twice.isFileTaken(at: 0)
        #expect(kept, "a refused body takes nothing out")
        var outside = Message(id: 1, body: [1, 0x0F, 1])
        try outside.attach(pipe.writeEnd)
        expectCodingError(.invalidRightIndex) { _ = try MessageDecoder().decode(FileDescriptorCarrier.self, from: &outside) }
    }

    @Test func C06_anotherCoderGetsATypedErrorForAFile() throws {
        let pipe = try FileDescriptor.pipe()
        defer { try? pipe.readEnd.close(); try? pipe.writeEnd.close() }
        let carrier = try FileDescriptorCarrier(duplicating: pipe.writeEnd)
        expectCodingError(.invalidValue) { _ = try JSONEncoder().encode([carrier]) }
        expectCodingError(.typeMismatch) {
            _ = try JSONDecoder().decode([FileDescriptorCarrier].self, from: Data("[0]".utf8))
        }
        #expect(!carrier.isTaken, "a refused encoding leaves the carrier its descriptor")
    }
}
