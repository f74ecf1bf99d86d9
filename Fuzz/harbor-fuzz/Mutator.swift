// Harbor fuzzing — structure-aware mutation of inbound programs.
//
// Half the time libFuzzer's own byte mutation runs (it finds the odd
// byte in a header); the other half the program is parsed, changed as a
// program (a right, a moved port with a queue, a region, a fragment's
// fate, a damaged field, a step added, dropped or repeated) and written
// back, so mutations keep producing packets the encoder made valid and
// then damaged in one place: the inputs that get past the first checks.
import HarborSystem
import HarborTransport

enum Mutator {
    static func mutateInbound(_ bytes: [UInt8], maxSize: Int, random: inout SplitMix) -> [UInt8]? {
        var steps = Program.parse(bytes)
        for _ in 0...Int.random(in: 0...2, using: &random) { mutate(&steps, &random) }
        let written = Program.write(steps)
        return written.count <= maxSize ? written : nil
    }

    private static func mutate(_ steps: inout [Step], _ random: inout SplitMix) {
        let messages = steps.indices.filter { if case .message = steps[$0] { true } else { false } }
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1:
            guard steps.count < Program.maximumSteps else { fallthrough }
            steps.insert(template(&random), at: Int.random(in: 0...steps.count, using: &random))
        case 2:
            guard !steps.isEmpty else { return }
            steps.remove(at: Int.random(in: 0..<steps.count, using: &random))
        case 3:
            guard !steps.isEmpty, steps.count < Program.maximumSteps else { return }
            let index = Int.random(in: 0..<steps.count, using: &random)
            steps.insert(steps[index], at: index)
        default:
            guard let index = messages.randomElement(using: &random),
                  case .message(var spec, var delivery) = steps[index] else {
                steps.append(template(&random))
                return
            }
            let moves = spec.rights.contains { if case .receive = $0 { true } else { false } }
            if moves && delivery.edits.count < 6 && Int.random(in: 0..<4, using: &random) == 0 {
                // A transfer record's 64-bit counters (at 16 and 24 in the first record).
                delivery.edits.append(ByteEdit(section: 3, offset: [16, 24].randomElement(using: &random) ?? 16,
                                               operation: 9, value: UInt32.random(in: 0...UInt32.max, using: &random)))
            } else if Bool.random(using: &random) {
                mutate(&spec, depth: 0, &random)
            } else {
                mutate(&delivery, &random)
            }
            steps[index] = .message(spec, delivery)
        }
    }

    private static func template(_ random: inout SplitMix) -> Step {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: .message(MessageSpec(id: 1, bodyLength: 4, rights: [.receive(PortSpec(queued: [MessageSpec(id: 2, rights: [.send])]))]), Delivery())
        case 1: .message(MessageSpec(id: 3, regions: [RegionSpec(copied: true, size: RegionSpec.sizes.randomElement(using: &random) ?? 1)]), Delivery())
        case 2: .message(MessageSpec(id: 4, regions: [RegionSpec(copied: false, size: 4096)]), Delivery())
        case 3: .message(MessageSpec(id: 5, reply: .sendOnce, rights: [.send]), Delivery())
        case 4: .wait(decoy(&random), connection: Int.random(in: 0...1, using: &random))
        case 5: .strayFragment(length: Int.random(in: 0...100_000, using: &random), corruption: UInt8.random(in: 0...255, using: &random), connection: 0)
        case 6: .close(connection: Int.random(in: 0...1, using: &random))
        default: .pump
        }
    }

    private static func mutate(_ spec: inout MessageSpec, depth: Int, _ random: inout SplitMix) {
        // Into a moved port's queue, sometimes.
        let moved = spec.rights.indices.filter { if case .receive = spec.rights[$0] { true } else { false } }
        if let index = moved.randomElement(using: &random), depth < Program.maximumDepth, Bool.random(using: &random),
           case .receive(var port) = spec.rights[index] {
            if port.queued.isEmpty || (port.queued.count < 3 && Bool.random(using: &random)) {
                port.queued.append(MessageSpec(id: Int32(depth), bodyLength: 3))
            } else {
                let queued = Int.random(in: 0..<port.queued.count, using: &random)
                mutate(&port.queued[queued], depth: depth + 1, &random)
            }
            port.noSenders = port.noSenders != (Int.random(in: 0..<8, using: &random) == 0)
            port.portDestroyed = port.portDestroyed != (Int.random(in: 0..<8, using: &random) == 0)
            spec.rights[index] = .receive(port)
            return
        }
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            guard spec.rights.count < 4 else { fallthrough }
            let rights: [RightSpec] = [.send, .sendOnce, .taken, .receive(PortSpec(queued: [MessageSpec(id: 8)]))]
            spec.rights.append(rights.randomElement(using: &random) ?? .send)
        case 1:
            if !spec.rights.isEmpty { spec.rights.remove(at: Int.random(in: 0..<spec.rights.count, using: &random)) }
        case 2:
            guard spec.regions.count < 3 else { fallthrough }
            spec.regions.append(RegionSpec(copied: Bool.random(using: &random),
                                           size: RegionSpec.sizes.randomElement(using: &random) ?? 1))
        case 3:
            if !spec.regions.isEmpty { spec.regions.remove(at: Int.random(in: 0..<spec.regions.count, using: &random)) }
        case 4: spec.reply = ReplySpec.allCases.randomElement(using: &random) ?? .none
        case 5: spec.bodyLength = [0, 1, 24, 4096, 65_535, 65_536, 65_537].randomElement(using: &random) ?? 0
        case 6: spec.counted.toggle()
        default: spec.id = Int32.random(in: Int32.min...Int32.max, using: &random)
        }
    }

    private static func mutate(_ delivery: inout Delivery, _ random: inout SplitMix) {
        switch Int.random(in: 0..<7, using: &random) {
        case 0, 1:
            guard delivery.edits.count < 6 else { fallthrough }
            delivery.edits.append(ByteEdit(section: UInt8.random(in: 0...4, using: &random),
                                           offset: UInt16.random(in: 0...80, using: &random),
                                           operation: UInt8.random(in: 0...9, using: &random),
                                           value: UInt32.random(in: 0...UInt32.max, using: &random)))
        case 2:
            if !delivery.edits.isEmpty { delivery.edits.remove(at: Int.random(in: 0..<delivery.edits.count, using: &random)) }
        case 3:
            guard delivery.descriptorEdits.count < 3 else { fallthrough }
            delivery.descriptorEdits.append(DescriptorEdit(operation: UInt8.random(in: 0...4, using: &random),
                                                           index: UInt8.random(in: 0...8, using: &random),
                                                           decoy: decoy(&random)))
        case 4:
            guard delivery.fragmentEdits.count < 3 else { fallthrough }
            delivery.fragmentEdits.append(FragmentEdit(operation: UInt8.random(in: 0...7, using: &random),
                                                       index: UInt8.random(in: 0...4, using: &random),
                                                       value: UInt16.random(in: 0...UInt16.max, using: &random)))
        case 5:
            delivery.memoryFile = UInt8.random(in: 0...UInt8(MemoryFileVariant.allCases.count), using: &random)
        default:
            delivery.keepDeclaredCount.toggle()
            delivery.connection = 1 - delivery.connection
        }
    }

    private static func decoy(_ random: inout SplitMix) -> Decoy {
        Decoy(kind: UInt8.random(in: 0..<UInt8(Decoys.kinds), using: &random), size: UInt8.random(in: 0...255, using: &random))
    }
}
