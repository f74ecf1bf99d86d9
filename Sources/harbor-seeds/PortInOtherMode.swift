// Harbor — seed 000 ④: a port in another mode does not keep the run going.
import Harbor

/// The port is added to `UITrackingRunLoopMode` (here "tracking") but the
/// loop runs `NSDefaultRunLoopMode`: the default mode is empty, so the run
/// returns at once and the thread ends.
enum PortInOtherMode: Experiment {
    static let name = "port-other-mode"
    static let summary = "a port in 'tracking' does not keep a 'default' run alive"
    static let article = "seed 000, 初体验疑问 ④: addPort:forMode:UITrackingRunLoopMode, run in default"
    static let expected = "the run returns at once (finished), no observer is told, the thread ends"

    static func run() -> [String] {
        let log = Log()
        onNewThread {
            let loop = Loop.current
            loop.add(LoopObserver(activities: .all) { log("observer: \($0)") }, forMode: .default)
            let port = makePortSource()
            loop.add(port, forMode: "tracking")
            let start = ContinuousClock.now
            let result = loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false)
            log("run(default) returned \(result) after \(ContinuousClock.now - start < .seconds(1) ? "no time" : "a long time")")
            log("thread ends")
        }
        return log.all
    }

    static func matches(_ log: [String]) -> Bool {
        log == ["run(default) returned finished after no time", "thread ends"]
    }
}
