// Harbor — harbor-bench's command line: list, one benchmark by name, or all.
import Glibc

let usage = """
    usage: harbor-bench list
           harbor-bench <name>|all [--quick] [--rounds N] [--iterations N] [--only v1,v2]

    Each benchmark measures its variants alternately in one process (the raw
    Linux floor among them) and prints median and p99 per operation, with the
    ratio to the floor measured in the same run. Scripts/bench.sh repeats whole
    runs, unpinned and pinned to one CPU, and summarises them.
    """

var arguments = Array(CommandLine.arguments.dropFirst())
// The other process of the cross-process benchmarks (harbor-bench re-executed).
if arguments.first == PeerLink.subcommand { runCrossProcessPeer(Array(arguments.dropFirst())) }
// The other process of the bootstrap-lookup benchmark's descriptor floor.
if arguments.first == DescriptorReplyFloor.subcommand { DescriptorReplyFloor.serve() }
// The other process of the bootstrap-lookup benchmark's look-up shape floor.
if arguments.first == LookUpShapeFloor.subcommand { LookUpShapeFloor.serve() }
var options = RunOptions()
var names: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--quick":
        options.quick = true
    case "--rounds", "--iterations":
        guard let value = arguments.first.flatMap({ Int($0) }), value > 0 else {
            print("\(argument) needs a positive number\n\n\(usage)")
            exit(2)
        }
        arguments.removeFirst()
        if argument == "--rounds" { options.rounds = value } else { options.iterations = value }
    case "--only":
        guard let value = arguments.first else {
            print("--only needs variant names, comma-separated\n\n\(usage)")
            exit(2)
        }
        arguments.removeFirst()
        options.only.formUnion(value.split(separator: ",").map(String.init))
    case "-h", "--help", "help":
        print(usage)
        exit(0)
    default:
        names.append(argument)
    }
}

if names == ["list"] {
    for benchmark in registeredBenchmarks { print(pad(benchmark.name, 28) + benchmark.summary) }
    exit(0)
}
if names.isEmpty {
    print(usage)
    exit(2)
}
var selected: [any RunnableBenchmark] = []
for name in names {
    if name == "all" {
        selected.append(contentsOf: registeredBenchmarks)
    } else if let benchmark = registeredBenchmarks.first(where: { $0.name == name }) {
        selected.append(benchmark)
    } else {
        print("unknown benchmark \(name); `harbor-bench list` shows them")
        exit(2)
    }
}

let clockCost = timerOverhead()
var failed = false
for benchmark in selected {
    do {
        try benchmark.runAndReport(options: options, clockCost: clockCost)
    } catch {
        print("FAILED \(benchmark.name): \(error)")
        failed = true
    }
}
exit(failed ? 1 : 0)
