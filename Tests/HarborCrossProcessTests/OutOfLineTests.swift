// Harbor — P08: large regions travel as sealed memfds, mapped read-only.
import CHarborLinux
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

@Suite(.serialized, .deadline(.seconds(120)))
struct OutOfLineTests {
    @Test func P08_aRegionFarBeyondTheSocketLimitReachesAnotherProcess() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let size = 64 << 20
            var buffer = try OutOfLineBuffer(count: size)
            var expected: UInt32 = 0
            buffer.withUnsafeMutableBytes { bytes in
                for index in stride(from: 0, to: bytes.count, by: 4096) {
                    bytes[index] = UInt8(truncatingIfNeeded: index >> 12)
                    expected &+= UInt32(bytes[index])
                }
            }
            var message = Message(id: PeerCommand.region)
            try message.attach(buffer)  // consumed: the sender can no longer write it
            let reply = try peer.request(message)
            #expect(reply.text == "\(size):\(expected)")
            peer.stop()
        }
    }

    @Test func P08_aReceivedRegionIsSealedAndReadOnly() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            var buffer = try OutOfLineBuffer(count: 1 << 20)
            buffer.withUnsafeMutableBytes { $0[0] = 42 }
            var message = Message(id: 1)
            try message.attach(buffer)
            try port.makeSendRight().send(message)
            let received = try port.receive(timeout: .zero)
            let region = try #require(received.regions.first)
            #expect(region.count == 1 << 20)
            #expect(region.withUnsafeBytes { $0[0] } == 42)
            let fd = try #require(region.mapping.descriptor).rawValue
            let seals = try MemoryFile.seals(fd)
            #expect(seals & charbor_F_SEAL_WRITE != 0)
            #expect(seals & charbor_F_SEAL_SHRINK != 0)
            // Nobody can map it writable any more, nor write through the descriptor.
            #expect(mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
            var byte: UInt8 = 1
            #expect(pwrite(fd, &byte, 1, 0) == -1)
        }
    }

    @Test func P08_payloadsChooseInlineOrOutOfLineBySize() throws {
        let small = [UInt8](repeating: 7, count: 1024)
        let large = [UInt8](repeating: 9, count: Message.outOfLineThreshold)
        let smallBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: small.count, alignment: 1)
        let largeBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: large.count, alignment: 1)
        defer { smallBytes.deallocate(); largeBytes.deallocate() }
        smallBytes.copyBytes(from: small)
        largeBytes.copyBytes(from: large)
        let inline = try Message(id: 1, payload: UnsafeRawBufferPointer(smallBytes))
        let outOfLine = try Message(id: 2, payload: UnsafeRawBufferPointer(largeBytes))
        #expect(inline.body == small && inline.regions.isEmpty)
        #expect(outOfLine.body.isEmpty && outOfLine.regions.first?.bytes == large)
    }

    @Test func P08_aPayloadJustOverTheInlineLimitIsSentOutOfLine() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            for size in [Message.maximumBodySize, Message.maximumBodySize + 1] {
                let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
                defer { bytes.deallocate() }
                bytes.initializeMemory(as: UInt8.self, repeating: 5)
                let message = try Message(id: 3, payload: UnsafeRawBufferPointer(bytes))
                let inline = message.regions.isEmpty
                #expect(inline == (size <= Message.maximumBodySize))
                // Before the threshold was tied to the inline limit, sizes between it
                // and 256 KiB made an inline body too large to send.
                try port.makeSendRight().send(message)
                let received = try port.receive(timeout: .zero)
                let total = received.body.count + (received.regions.first?.count ?? 0)
                #expect(total == size)
            }
        }
    }

    @Test func P08_aPayloadFilledInPlaceIsInlineOrOutOfLineBySize() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            for size in [0, 1024, Message.maximumBodySize, Message.outOfLineThreshold, 3 << 20] {
                var written = 0
                let message = try Message(id: 4, payloadCount: size) { bytes in
                    written = bytes.count
                    for index in 0..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) }
                }
                #expect(written == size)
                #expect(message.regions.isEmpty == (size < Message.outOfLineThreshold))
                try port.makeSendRight().send(message)
                let received = try port.receive(timeout: .zero)
                let bytes = received.regions.first?.bytes ?? received.body
                #expect(bytes.count == size)
                #expect(bytes.indices.allSatisfy { bytes[$0] == UInt8(truncatingIfNeeded: $0 &* 7) })
            }
        }
    }

    @Test func P08_aPayloadFilledInPlaceReachesAnotherProcess() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let size = 5 * WireFormat.maximumFragmentData + 4_321
            var expected: UInt32 = 0
            let message = try Message(id: PeerCommand.region, payloadCount: size) { bytes in
                for index in 0..<bytes.count {
                    bytes[index] = UInt8(truncatingIfNeeded: index &* 13)
                    expected &+= UInt32(bytes[index])
                }
            }
            let reply = try peer.request(message)
            #expect(reply.text == "\(size):\(expected)")
            peer.stop()
        }
    }
}
