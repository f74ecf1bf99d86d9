// Harbor — the seed articles' run-loop experiments, runnable one by one.
//
// `harbor-seeds <name>` runs one experiment, `harbor-seeds all` runs every
// one; each prints what happens and what its article says should happen.
// UIKit is replaced by what a daemon has: a second thread posting work
// stands in for touches, a timer for scrolling.
import Glibc
import Harbor

let experiments: [any Experiment.Type] = [
    PortKeepAlive.self, PortInOtherMode.self, TimerKeepAlive.self,
    ModeSwitching.self, ObserverLog.self, CommonModeTimer.self,
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
var failures = 0
for experiment in chosen {
    print("== \(experiment.name): \(experiment.summary)")
    print("   article: \(experiment.article)")
    let log = experiment.run()
    for line in log { print("   | \(line)") }
    let expected = experiment.expected
    let matches = experiment.matches(log)
    print("   expected: \(expected)")
    print("   \(matches ? "MATCHES the article" : "DOES NOT MATCH the article")\n")
    if !matches { failures += 1 }
}
exit(failures == 0 ? 0 : 1)
