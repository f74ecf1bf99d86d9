// Harbor — seed 000 §(4) and seed 004 §5.1: a port keeps a worker thread alive.
import Harbor

/// `[runLoop addPort:[NSMachPort port] forMode:NSDefaultRunLoopMode]` then
/// `runMode:beforeDate:` once, without a `while`: the thread sleeps until
/// work arrives, handles it, and — since runMode returns after one
/// non-timer source — its task ends and the thread exits.
enum PortKeepAlive: Experiment {
    static let name = "port-keepalive"
    static let summary = "a port keeps a worker alive; runMode:beforeDate: returns after one source"
    static let article = "seed 000, 使用场景 1 (4)/(5): addPort + runMode:beforeDate: without while"
    static let expected = "worker sleeps (does not exit) until work is posted; after the first task runMode returns YES and the thread ends"

    static func run() -> [String] {
        let log = Log()
        let loopHandoff = Handoff<Loop>()
        let worker = Background {
            log("worker: start")
            let loop = Loop.current
            let port = makePortSource { _ in log("worker: message") }
            loop.add(port, forMode: .default)
            loopHandoff.put(loop)
            let handled = loop.run(mode: .default, before: nil)
            log("worker: runMode returned \(handled)")
            log("worker: thread ends")
        }
        // The "touch": another thread posts work to the sleeping worker.
        loopHandoff.take().perform { log("worker: subThreadTodo ran on the worker") }
        worker.join()
        return log.all
    }

    static func matches(_ log: [String]) -> Bool {
        log == ["worker: start", "worker: subThreadTodo ran on the worker", "worker: runMode returned true", "worker: thread ends"]
    }
}

