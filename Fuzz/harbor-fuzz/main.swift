// Harbor fuzzing — the driver: libFuzzer's command line, or the seeds.
//
// HARBOR_FUZZ_TARGET=<target> harbor-fuzz [libFuzzer flags] [corpus…]
// HARBOR_FUZZ_TARGET=<target> HARBOR_FUZZ_SEEDS=<dir> harbor-fuzz   (writes the seeds)
import CHarborFuzz
import Glibc
import HarborSystem
import HarborTransport

let target = FuzzTarget.selected
if let directory = getenv("HARBOR_FUZZ_SEEDS").map({ String(cString: $0) }) {
    for (index, seed) in target.seeds().enumerated() {
        let path = "\(directory)/seed-\(index)"
        guard let file = fopen(path, "wb") else { fail("cannot write \(path)") }
        _ = seed.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
    exit(0)
}
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
