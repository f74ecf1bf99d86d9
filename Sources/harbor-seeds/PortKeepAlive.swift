// Harbor — seed 000 §2: a port keeps a worker alive until performSelector:onThread: hands it work.
import Harbor

/// `[runLoop addPort:[NSMachPort port] forMode:NSDefaultRunLoopMode]`, then
/// `runMode:beforeDate:distantFuture` once, without a `while`: the thread
/// sleeps until `performSelector:onThread:` hands it `wantTodo`, and since
/// runMode returns after one non-timer source, its task then ends.
enum PortKeepAlive: Experiment {
    static let name = "port-keepalive"
    static let summary = "a port keeps a worker alive; runMode:beforeDate: returns after one source"
    static let article = "seed 000, 2.保持线程的存活后,让线程在我们需要的时候响应消息"

    static func run(print: @escaping @Sendable (String) -> Void) {
        print("main----开辟子线程")
        // snippet: seed-port-keepalive
        let subThread = LoopThread(name: "subThread") {                  // initWithTarget:selector:@selector(subThreadTodo)
            print("subThread----开始执行子线程任务")
            let runLoop = Loop.current                                    // [NSRunLoop currentRunLoop]
            guard let port = try? PortSource(ReceiveRight(), { _ in }) else { return }
            runLoop.add(port, forMode: .default)                          // addPort:[NSMachPort port] forMode:NSDefaultRunLoopMode
            let handled = runLoop.run(mode: .default, before: nil)        // runMode:NSDefaultRunLoopMode beforeDate:distantFuture
            print("runMode:beforeDate: returned \(handled)")
            print("subThread----执行子线程任务结束")
        }
        subThread.start()                                                 // [subThread start]
        // touchesBegan: performSelector:@selector(wantTodo) onThread:subThread withObject:nil waitUntilDone:NO
        subThread.perform { print("当前线程:subThread执行任务处理数据") }
        subThread.join()
        if subThread.loop.isTerminated { print("subThread线程被释放了") }
        // end snippet
    }
}
