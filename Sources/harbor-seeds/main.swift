// Harbor — the seed articles' run-loop experiments, runnable one by one.
//
// `harbor-seeds <name>` runs one experiment, `harbor-seeds all` runs every
// one; each prints its article and then its events, one `   | ` line each.
// What the articles say should happen is in the tests
// (Tests/PortingGuideTests/SeedExperimentTests.swift), which run this
// executable; Docs/Porting.md shows each experiment's code beside the
// article's. UIKit is replaced by what a daemon has: another thread
// performing work stands in for touches, a mode named UITrackingRunLoopMode
// for scrolling. Experiments run on the main thread (main-queue needs it).
import Glibc
import Harbor

let experiments: [any Experiment.Type] = [
    PortKeepAlive.self, PortInOtherMode.self, TimerKeepAlive.self,
    ModeSwitching.self, ObserverLog.self, CommonModeTimer.self, MainQueue.self,
]

let arguments = CommandLine.arguments.dropFirst()
guard let choice = arguments.first else {
    print("usage: harbor-seeds <name>|all\n")
    for experiment in experiments { print("  \(experiment.name.padding(20))\(experiment.summary)") }
    exit(2)
}
let chosen = choice == "all" ? experiments : experiments.filter { $0.name == choice }
if chosen.isEmpty {
    print("no experiment named \(choice)")
    exit(2)
}
for experiment in chosen {
    print("== \(experiment.name): \(experiment.summary)")
    print("   article: \(experiment.article)")
    // Events come from several threads; they are printed once it is over.
    let log = Log()
    experiment.run { log($0) }
    for line in log.all { print("   | \(line)") }
    print("")
}
