// Harbor — seed 000 ④: a port keeps [runLoop run] going only in the mode the loop runs.
import Glibc
import Harbor

/// `[runLoop addPort:[NSMachPort port] forMode:UITrackingRunLoopMode]` then
/// `[runLoop run]`: `run` runs the default mode, which is empty, so it
/// returns at once and the thread ends. Added for the common modes (which
/// hold the default mode), the same port keeps the thread alive.
enum PortInOtherMode: Experiment {
    static let name = "port-other-mode"
    static let summary = "a port in UITrackingRunLoopMode does not keep [runLoop run] alive; one in common modes does"
    static let article = "seed 000, (5)初体验产生的疑问 ④RunLoop能正常运行的条件是什么?"

    static func run(print: @escaping @Sendable (String) -> Void) {
        for mode: LoopMode in ["UITrackingRunLoopMode", .common] {
            print("[\(mode)] main----开辟子线程")
            // snippet: seed-port-other-mode
            guard let port = try? PortSource(ReceiveRight(), { _ in }) else { return print("out of descriptors") }  // [NSMachPort port]
            let subThread = LoopThread(name: "subThread") {
                print("[\(mode)] subThread----开始执行子线程任务")
                let runLoop = Loop.current
                runLoop.add(port, forMode: mode)                          // addPort:[NSMachPort port] forMode:mode
                runLoop.run()                                             // [runLoop run]: the default mode only
                print("[\(mode)] subThread----执行子线程任务结束")
            }
            subThread.start()
            // end snippet
            if mode == .common {
                // The article's thread runs forever. Wait until it sleeps in
                // its loop, then end [runLoop run] the only way it ends: by
                // emptying its mode.
                var waited = 0
                while !subThread.loop.isWaiting && waited < 10_000 {
                    usleep(1_000)
                    waited += 1
                }
                print("[\(mode)] the thread sleeps in its loop: \(subThread.loop.isWaiting); removing the port")
                port.invalidate()
            }
            subThread.join()                                              // the UITrackingRunLoopMode thread ends by itself
            if subThread.loop.isTerminated { print("[\(mode)] subThread线程被释放了") }
        }
    }
}
