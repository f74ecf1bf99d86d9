// Harbor fuzzing — the seed programs each inbound target starts from.
//
// Each seed is a program whose messages the encoder turns into valid
// packets (Fuzz/Corpus/<target>/ is made from these, then minimized and
// grown by fuzzing; Scripts/fuzz.sh --seed rewrites them).
import HarborSystem
import HarborTransport

enum Seeds {
    static func inbound(_ focus: Focus) -> [[UInt8]] {
        let programs: [[Step]] = switch focus {
        case .packet: packet
        case .transfer: transfer
        case .fragments: fragments
        case .regions: regions
        }
        return programs.map(Program.write)
    }

    /// The message a focused target puts first when a program has none.
    static func focusMessage(_ focus: Focus) -> MessageSpec {
        switch focus {
        case .packet: MessageSpec(id: 1, bodyLength: 5)
        case .transfer: MessageSpec(id: 2, rights: [.receive(PortSpec(queued: [MessageSpec(id: 3, bodyLength: 5)]))])
        case .fragments: MessageSpec(id: 4, regions: [RegionSpec(copied: true, size: 4097)])
        case .regions: MessageSpec(id: 5, regions: [RegionSpec(copied: false, size: 4096)])
        }
    }

    private static func message(_ spec: MessageSpec, _ delivery: Delivery = Delivery()) -> Step {
        .message(spec, delivery)
    }

    private static let packet: [[Step]] = [
        [message(MessageSpec(id: 7, bodyLength: 5))],
        [message(MessageSpec(id: 8, bodyLength: 12, counted: false, reply: .sendOnce, rights: [.send, .sendOnce, .taken]))],
        [message(MessageSpec(id: 9, reply: .send, rights: [.send, .send, .send, .send]))],
        [message(MessageSpec(id: 10, bodyLength: 65_536))],
        [.raw(bytes: Packets.plain(id: 11, body: [1, 2, 3]), decoys: [], connection: 0)],
        [.raw(bytes: Packets.plain(id: 12, body: []), decoys: [Decoy(kind: 0, size: 0)], connection: 1)],
        [.wait(Decoy(kind: 0, size: 0), connection: 0), message(MessageSpec(id: 13, bodyLength: 1))],
        [message(MessageSpec(id: 14, rights: [.send]),
                 Delivery(descriptorEdits: [DescriptorEdit(operation: 3, index: 0, decoy: Decoy(kind: 9, size: 0))]))],
        [message(MessageSpec(id: 15, rights: [.send]),
                 Delivery(descriptorEdits: [DescriptorEdit(operation: 3, index: 1, decoy: Decoy(kind: 4, size: 4))]))],
        [message(MessageSpec(id: 16, reply: .sendOnce, rights: [.sendOnce]),
                 Delivery(edits: [ByteEdit(section: 1, offset: 8, operation: 9, value: 3)]))],
        [message(MessageSpec(id: 17, bodyLength: 3), Delivery(connection: 1)), .close(connection: 1),
         message(MessageSpec(id: 18, bodyLength: 3))],
        // Carried files (C07): an eventfd and a socket as files.
        [.raw(bytes: Packets.files(id: 19, count: 2), decoys: [Decoy(kind: 0, size: 0), Decoy(kind: 9, size: 0)],
              connection: 0)],
    ]

    private static let transfer: [[Step]] = [
        [message(MessageSpec(id: 20, rights: [.receive(PortSpec(queued: [
            MessageSpec(id: 21, bodyLength: 5), MessageSpec(id: 22, reply: .sendOnce, rights: [.send]),
        ]))]))],
        [message(MessageSpec(id: 23, rights: [.receive(PortSpec(noSenders: true, portDestroyed: true, limit: 3))]))],
        [message(MessageSpec(id: 24, rights: [.receive(PortSpec(queued: [
            MessageSpec(id: 25, rights: [.receive(PortSpec(queued: [MessageSpec(id: 26, bodyLength: 2)]))],
                        regions: [RegionSpec(copied: true, size: 4097)]),
        ]))]))],
        [message(nested(depth: 5))],
        [message(MessageSpec(id: 27, rights: [.send, .receive(PortSpec(queued: [MessageSpec(id: 28, rights: [.sendOnce])])),
                                              .receive(PortSpec())]),
                 Delivery(edits: [ByteEdit(section: 3, offset: 4, operation: 3, value: 9)]))],
        [message(MessageSpec(id: 29, rights: [.receive(PortSpec(queued: [MessageSpec(id: 30, bodyLength: 40_000),
                                                                         MessageSpec(id: 31, bodyLength: 40_000)]))]))],
    ]

    private static let fragments: [[Step]] = [
        [message(MessageSpec(id: 40, regions: [RegionSpec(copied: true, size: 4097)]))],
        [message(MessageSpec(id: 41, bodyLength: 10, rights: [.send],
                             regions: [RegionSpec(copied: true, size: 200_000), RegionSpec(copied: true, size: 1)]))],
        [message(MessageSpec(id: 42, regions: [RegionSpec(copied: true, size: 200_000)]),
                 Delivery(fragmentEdits: [FragmentEdit(operation: 5, index: 1, value: 0),
                                          FragmentEdit(operation: 7, index: 0, value: 30_000)]))],
        [message(MessageSpec(id: 43, regions: [RegionSpec(copied: true, size: 98_281)]),
                 Delivery(fragmentEdits: [FragmentEdit(operation: 1, index: 0, value: 0)]))],
        [message(MessageSpec(id: 44, regions: [RegionSpec(copied: true, size: 300_001)]),
                 Delivery(fragmentEdits: [FragmentEdit(operation: 0, index: 2, value: 0)])),
         message(MessageSpec(id: 45, regions: [RegionSpec(copied: true, size: 7)]))],
        [message(MessageSpec(id: 46, regions: [RegionSpec(copied: true, size: 65_536)]),
                 Delivery(fragmentEdits: [FragmentEdit(operation: 6, index: 0, value: 0)])), .close(connection: 0)],
        [.strayFragment(length: 100, corruption: 0, connection: 0),
         message(MessageSpec(id: 47, regions: [RegionSpec(copied: false, size: 1), RegionSpec(copied: true, size: 1)]))],
    ]

    private static let regions: [[Step]] = [
        [message(MessageSpec(id: 60, regions: [RegionSpec(copied: false, size: 4096)]))],
        [message(MessageSpec(id: 61, regions: [RegionSpec(copied: false, size: 0), RegionSpec(copied: false, size: 1),
                                               RegionSpec(copied: false, size: 65_536)]))],
        [message(MessageSpec(id: 62, bodyLength: 60_000, rights: [.receive(PortSpec(queued: [
            MessageSpec(id: 63, bodyLength: 60_000, regions: [RegionSpec(copied: true, size: 4096)]),
        ]))]))],
        [message(MessageSpec(id: 64, regions: [RegionSpec(copied: false, size: 4097)]),
                 Delivery(descriptorEdits: [DescriptorEdit(operation: 3, index: 0, decoy: Decoy(kind: 2, size: 3))]))],
    ] + MemoryFileVariant.allCases.map { variant in
        [message(MessageSpec(id: 70 + Int32(variant.rawValue), bodyLength: 9, rights: [.send],
                             regions: [RegionSpec(copied: false, size: 7)]),
                 Delivery(memoryFile: UInt8(variant.rawValue + 1)))]
    }

    /// A moved receive right whose queued message moves one, `depth` deep.
    private static func nested(depth: Int) -> MessageSpec {
        guard depth > 0 else { return MessageSpec(id: 99, bodyLength: 1) }
        return MessageSpec(id: Int32(90 + depth), rights: [.receive(PortSpec(queued: [nested(depth: depth - 1)]))])
    }
}
