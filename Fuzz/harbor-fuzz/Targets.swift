// Harbor fuzzing — the targets, chosen by HARBOR_FUZZ_TARGET, and the
// entry points libFuzzer calls (Docs/Fuzzing.md).
import CHarborFuzz
import Glibc
import HarborSystem
import HarborTransport

/// One fuzz target: what runs an input, its seeds, its structured mutation.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    let run: @Sendable ([UInt8]) -> Void
    let seeds: @Sendable () -> [[UInt8]]
    /// Structure-aware mutation; nil when libFuzzer's own suits the input.
    let mutate: (@Sendable ([UInt8], Int, inout SplitMix) -> [UInt8]?)?

    static let all: [FuzzTarget] = [
        inbound("packet", .packet, "packets and their descriptors: every step kind, raw packets, wait packets, decoys"),
        inbound("transfer", .transfer, "moved receive rights: transfer records, queued messages nested 5 deep, requests"),
        inbound("fragments", .fragments, "fragmented messages: copied regions, fragments lost, repeated, resized, interleaved"),
        inbound("regions", .regions, "out-of-line regions and memory-file packets: memfds sealed every way, every size"),
        FuzzTarget(name: "bootstrap", summary: "the bootstrap protocol: requests to harbord's server, replies, listings, welcomes",
                   run: BootstrapTarget.run, seeds: { BootstrapTarget.seeds }, mutate: nil),
        FuzzTarget(name: "policy", summary: "the policy file parser",
                   run: PolicyTarget.run, seeds: { PolicyTarget.seeds }, mutate: PolicyTarget.mutate),
        FuzzTarget(name: "decode", summary: "the packet decoder in process: headers, packets, transfers, regions, fragments",
                   run: DecodeTarget.run, seeds: { DecodeTarget.seeds }, mutate: nil),
        FuzzTarget(name: "ledger", summary: "a port's per-uid accounting in process: charges, settles, parked messages",
                   run: LedgerTarget.run, seeds: { LedgerTarget.seeds }, mutate: nil),
        FuzzTarget(name: "coding", summary: "HarborCoding's decoder: Codable bodies with rights and regions, in process",
                   run: CodingTarget.run, seeds: { CodingTarget.seeds }, mutate: nil),
        FuzzTarget(name: "admission", summary: "a port's admission in process: pumps, parking, moved queues, ends, receives",
                   run: AdmissionTarget.run, seeds: { AdmissionTarget.seeds }, mutate: nil),
        FuzzTarget(name: "actors", summary: "HarborDistributed's calls in process: invocations of a hosted distributed actor",
                   run: ActorsTarget.run, seeds: { ActorsTarget.seeds }, mutate: nil),
        FuzzTarget(name: "reassembly", summary: "fragmented messages put back together in process: starts, fragments, limits",
                   run: ReassemblyTarget.run, seeds: { ReassemblyTarget.seeds }, mutate: nil),
        FuzzTarget(name: "xpc", summary: "HarborXPC's sessions in process: what a listener, a session and a reply path decode",
                   run: XPCTarget.run, seeds: { XPCTarget.seeds }, mutate: nil),
    ]

    private static func inbound(_ name: String, _ focus: Focus, _ summary: String) -> FuzzTarget {
        FuzzTarget(name: name, summary: summary, run: { Inbound.run($0, focus: focus) },
                   seeds: { Seeds.inbound(focus) }, mutate: Mutator.mutateInbound)
    }

    /// The target HARBOR_FUZZ_TARGET names.
    static let selected: FuzzTarget = {
        let name = getenv("HARBOR_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let target = all.first(where: { $0.name == name }) else {
            report("harbor-fuzz: set HARBOR_FUZZ_TARGET to one of:")
            for target in all { report("  \(target.name): \(target.summary)") }
            exit(2)
        }
        return target
    }()
}

/// libFuzzer's callback: one input.
let testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzTarget.selected.run(bytes)
    return 0
}

/// libFuzzer calls this (it looks the symbol up) to mutate an input.
@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: CUnsignedInt) -> Int {
    guard let data else { return 0 }
    var random = SplitMix(seed: UInt64(seed))
    if let mutate = FuzzTarget.selected.mutate, random.next() % 2 == 0 {
        let bytes = Array(UnsafeBufferPointer(start: data, count: size))
        if let mutated = mutate(bytes, maxSize, &random) {
            mutated.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: mutated.count) }
            return mutated.count
        }
    }
    return LLVMFuzzerMutate(data, size, maxSize)
}
