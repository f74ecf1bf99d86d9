// Harbor — P08/P09: a received memory file must be sealed for good. A hostile
// sender that leaves a seal off, or keeps a writable shared mapping (only
// possible with F_SEAL_FUTURE_WRITE), is refused, counted, and leaks nothing.
import CHarborLinux
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// A memfd of `count` bytes of `fill`, with `seals` added.
private func memoryFile(count: Int, fill: UInt8, seals: CInt) throws -> SharedDescriptor {
    let file = try MemoryFile.create(name: "hostile")
    try MemoryFile.writeAll(file.rawValue, [[UInt8](repeating: fill, count: count)])
    if seals != 0 { try MemoryFile.addSeals(file.rawValue, seals) }
    return file
}

/// The bytes of a message carrying one out-of-line region (descriptor 0).
private func regionPacket() throws -> [UInt8] {
    let honest = try memoryFile(count: 4096, fill: 1, seals: MappedRegion.requiredSeals)
    var content = MessageContent(id: 8, body: [], trailer: MessageTrailer(sender: .current))
    content.regions = [try MappedRegion(sealed: honest, limit: Int.max)]
    var encoder = WireEncoder(export: PortCore.export)
    var (head, tail) = try encoder.encode(content)
    encoder.patch(&head, descriptorCount: 1)
    return head + tail
}

@Suite(.serialized, .deadline(.seconds(120)))
struct SealTests {
    @Test func P08_aRegionMissingASealIsRefusedAndClosed() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let packet = try regionPacket()
            let partial: [CInt] = [
                charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL,   // no F_SEAL_WRITE
                charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK,                        // may grow, may be resealed
                0,                                                                   // no seal at all
            ]
            for seals in partial {
                let file = try memoryFile(count: 4096, fill: 2, seals: seals)
                let refused = try raw.refusals(.unsealed) {
                    try raw.send(packet, descriptors: [file.rawValue])
                    #expect(raw.nothingDelivered())
                }
                #expect(refused == 1, "seals \(seals) must be refused")
            }
            // The honest packet still goes through on the same connection.
            let good = try memoryFile(count: 4096, fill: 3, seals: MappedRegion.requiredSeals)
            try raw.send(packet, descriptors: [good.rawValue])
            let message = try raw.port.receive(timeout: .seconds(5))
            #expect(message.regions.first?.count == 4096)
        }
    }

    @Test func P08_aSenderKeepingAWritableMappingIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let packet = try regionPacket()
            let file = try memoryFile(count: 4096, fill: 4, seals: 0)
            // The attack: a shared writable mapping kept by the sender.
            let mapping = try #require(mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file.rawValue, 0))
            #expect(mapping != MAP_FAILED)
            defer { munmap(mapping, 4096) }
            // F_SEAL_WRITE is impossible while it exists; F_SEAL_FUTURE_WRITE is not.
            #expect(fcntl(file.rawValue, charbor_F_ADD_SEALS, charbor_F_SEAL_WRITE) == -1 && errno == EBUSY)
            try MemoryFile.addSeals(file.rawValue, charbor_F_SEAL_FUTURE_WRITE | charbor_F_SEAL_SHRINK
                                    | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL)
            let refused = try raw.refusals(.unsealed) {
                try raw.send(packet, descriptors: [file.rawValue])
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            // What it would have allowed: the bytes change after sending.
            mapping.storeBytes(of: 99, as: UInt8.self)
            #expect(try MemoryFile.seals(file.rawValue) & charbor_F_SEAL_WRITE == 0)
        }
    }

    @Test func P09_aPacketInAnUnsealedMemoryFileIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let inner = validPacket()
            let file = try MemoryFile.create(name: "hostile-packet")
            try MemoryFile.writeAll(file.rawValue, [inner])
            try MemoryFile.addSeals(file.rawValue, charbor_F_SEAL_FUTURE_WRITE | charbor_F_SEAL_SHRINK
                                    | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL)
            var header = [UInt8](repeating: 0, count: WireFormat.headerSize)
            header[0] = WireFormat.version
            header[1] = WireFormat.Kind.message.rawValue
            header[2] = UInt8(WireFormat.Flags.inMemoryFile.rawValue)
            header[14] = 1
            header[20] = UInt8(WireFormat.headerSize)
            let refused = try raw.refusals(.unsealed) {
                try raw.send(header, descriptors: [file.rawValue])
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
        }
    }
}
