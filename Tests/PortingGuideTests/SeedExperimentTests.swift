// Harbor — the seed articles' experiments (Sources/harbor-seeds), run as the executable users run,
// against what the articles printed or said: the expectations live here, quoted with their article.
import Foundation
import HarborTestSupport
import Testing

extension PortingGuideTests {
    /// Each test runs `harbor-seeds <name>` and compares its events with the
    /// article's. Darwin's log lines are quoted verbatim; ``darwinLine(_:)``
    /// turns one into what Harbor prints (an `NSThread` description becomes
    /// the thread's name; `kCFRunLoopDefaultMode` is Harbor's `default`).
    /// Every other difference from Darwin is spelled out where it occurs.
    @Suite struct SeedExperimentTests {
        /// seed 000, 2.保持线程的存活后,让线程在我们需要的时候响应消息: a port and
        /// `runMode:beforeDate:` without a `while`; a touch performs `wantTodo`.
        @Test func RL09_RL11_seed000_aPortKeepsAWorkerAlive_andRunModeReturnsAfterOneSource() throws {
            let article = [
                "<NSThread: 0x60c000074f40>{number = 1, name = main}----开辟子线程",
                "<MyThread: 0x604000073f40>{number = 3, name = subThread}----开始执行子线程任务",
                "当前线程:<MyThread: 0x604000073f40>{number = 3, name = subThread}执行任务处理数据",
                "<MyThread: 0x604000073f40>{number = 3, name = subThread}----执行子线程任务结束",
                "subThread线程被释放了",
            ]
            var expected = article.map(darwinLine)
            // Harbor also prints what runMode returned; the article says YES in words.
            expected.insert("runMode:beforeDate: returned true", at: 3)
            // "subThread线程被释放了" is MyThread's dealloc on Darwin; Harbor has
            // no thread object to free: it prints it once join() returned and
            // the thread's loop is torn down.
            #expect(try seeds("port-keepalive") == expected)
        }

        /// seed 000, (5)初体验产生的疑问 ④: a port in UITrackingRunLoopMode and
        /// `[runLoop run]` (the default mode): the thread ends at once. From
        /// (4): the same port in NSRunLoopCommonModes keeps it running.
        @Test func RL04_RL05_seed000_aPortInAnotherModeLetsRunReturnAtOnce() throws {
            let events = try seeds("port-other-mode")
            let inTracking = [
                "<NSThread: 0x60800006d1c0>{number = 1, name = main}----开辟子线程",
                "<MyThread: 0x600000071800>{number = 3, name = subThread}----开始执行子线程任务",
                "<MyThread: 0x600000071800>{number = 3, name = subThread}----执行子线程任务结束",
                "subThread线程被释放了",
            ]
            #expect(lines(events, tagged: "[UITrackingRunLoopMode]") == inTracking.map(darwinLine))
            let inCommonModes = [
                "<NSThread: 0x60c000066a00>{number = 1, name = main}----开辟子线程",
                "<MyThread: 0x604000065980>{number = 3, name = subThread}----开始执行子线程任务",
            ]
            // The article's thread runs forever. The experiment waits until it
            // sleeps in its loop, then removes the port, which ends [runLoop run].
            #expect(lines(events, tagged: "[common]") == inCommonModes.map(darwinLine) + [
                "the thread sleeps in its loop: true; removing the port",
                "subThread----执行子线程任务结束", "subThread线程被释放了",
            ])
        }

        /// seed 003, 对 repeat 的思考 and 总结 2: a timer is all that keeps
        /// `[runLoop run]` going. With repeats:YES "每点击一次屏幕, 都会对应执行
        /// runAnyTime 里面的内容"; with repeats:NO "可以发现常驻线程被终止了":
        @Test func RL05_RL07_seed003_aRepeatingTimerKeepsTheThreadAlive_aOneShotOneDoesNot() throws {
            let article = ["veryitman--timerRun.", "veryitman--asyncRun. End Run."]
            let events = try seeds("timer-keepalive")
            #expect(lines(events, tagged: "[repeats:YES]") == [
                "veryitman--timerRun.",
                "veryitman--runAnyTime. Current Thread: veryitman-thread",
                "viewDidDisappear: [self.timer invalidate]",
                "veryitman--asyncRun. End Run.",  // only once the timer is gone
            ])
            // Later work finds the thread gone: performAndWait throws where
            // Darwin's performSelector:onThread: on a finished thread is silently lost.
            #expect(lines(events, tagged: "[repeats:NO]") == article + ["runAnyTime never runs (loop terminated)"])
            // Not ported: the article's repeats:NO thread survived without a scroll
            // view, when touches came before the timer fired. Darwin's
            // performSelector:onThread: leaves a version-0 source in the thread's
            // loop; Harbor's perform keeps a loop alive only while it is pending.
        }

        /// seed 000, 关于子线程RunLoop切换Mode的思考 and 更正: the switch back to
        /// default never runs (a worker's common modes hold only default);
        /// CFRunLoopAddCommonMode, or performing with modes:@[UITrackingRunLoopMode], fixes it.
        @Test func RL04_RL11_seed000_modeSwitchingWorker_beforeAndAfterTheCorrection() throws {
            let toTracking = darwinLine("当前线程:<MyThread: 0x60c00007ec80>{number = 3, name = subThread} RunLoop即将将Mode改变成:UITrackingRunLoopMode")
            let timer = "Timer启动啦,当前RunLoopMode:UITrackingRunLoopMode"
            let toDefault = darwinLine("当前线程:<MyThread: 0x60400026e600>{number = 3, name = subThread} RunLoop即将将Mode改变成:kCFRunLoopDefaultMode")
            let events = try seeds("mode-switching")
            // Before the 更正: after the release the article's timer keeps printing, and no switch comes.
            let original = lines(events, tagged: "[original]")
            #expect(original.first == toTracking && !original.contains(toDefault))
            #expect(original.filter { $0 == timer }.count == 6, "three while scrolling, three after: \(original)")
            #expect(original.suffix(2) == ["three more fires in UITrackingRunLoopMode: the switch back never ran", "worker ends"])
            // After it: the switch back runs and the timer stops. (The article
            // scrolls twice and for longer; the experiment once, for three fires.)
            for tag in ["[fix 1: addCommonMode]", "[fix 2: perform modes:]"] {
                let fixed = lines(events, tagged: tag)
                guard let back = fixed.firstIndex(of: toDefault) else {
                    Issue.record("\(tag): the switch back never ran: \(fixed)")
                    continue
                }
                #expect(fixed.first == toTracking && fixed[1..<back].filter { $0 == timer }.count >= 3, "\(tag) \(fixed)")
                // A fire already due when the switch ran may still come in that
                // pass (CF fires due timers after the pass's blocks); no more.
                let after = fixed[(back + 1)...]
                #expect(after.last == "worker ends" && after.filter { $0 == timer }.count <= 1,
                        "\(tag): the timer went on after the switch back: \(fixed)")
            }
        }

        /// seed 002, 二、配置 Run Loop: an all-activities observer, a repeating
        /// timer, runUntilDate: ten times. "//如果没有这个定时器 loop会启动后立马退出，并且通知也不会发出"
        /// Scaled: a 10 ms timer, three runs of 50 ms.
        @Test func RL05_RL10_seed002_anObserverSeesEveryActivityAroundATimer() throws {
            let events = try seeds("observers")
            // Without the timer: back at once, and no observer was told.
            #expect(events.first == "without a timer: runUntilDate returned at once")
            let runs = events.dropFirst().split { $0.hasPrefix("while循环") }
            #expect(events.filter { $0.hasPrefix("while循环") } == ["while循环-2", "while循环-1", "while循环-0"])
            #expect(runs.count == 3)
            for run in runs.map(Array.init) {
                #expect(run.first == "observer: entry" && run.last == "observer: exit", "\(run)")
                let fires = run.indices.filter { run[$0] == "log: -[ViewController doFireTimer:]" }
                // About five fires in 50 ms; a loaded machine may deschedule the
                // thread past several ticks, which the timer skips (it never bursts).
                #expect(fires.count >= 1, "\(run)")
                // CF's order: the loop sleeps, wakes, then fires the timer.
                for fire in fires {
                    #expect(run[..<fire].last { $0.hasPrefix("observer:") } == "observer: afterWaiting", "\(run)")
                }
                #expect(run.contains("observer: beforeTimers") && run.contains("observer: beforeSources"))
            }
        }

        /// seed 000, 3.<2>使用NSTimer遇到的坑: "4.我们的timer是添加在NSDefaultRunLoopMode中的,
        /// 并没有添加到UITrackingRunLoopMode中" so it stops while scrolling; "7.…直接加到commonMode中".
        /// seed 004, 4.: `addTimer:timer forMode:NSRunLoopCommonModes`.
        @Test func RL04_RL07_seed000_aCommonModesTimerFiresWhileScrolling() throws {
            let events = try seeds("common-timer")
            #expect(events.prefix(3) == [
                "scrolling: running UITrackingRunLoopMode",
                "common-modes timer fired in UITrackingRunLoopMode",
                "scroll ended: running default",
            ])
            #expect(Set(events.dropFirst(3)) == ["default-mode timer fired in default", "common-modes timer fired in default"])
            #expect(events.count == 5)
        }

        /// seed 001, 關于GCD: "當調(diào)用 dispatch_async(dispatch_get_main_queue(), block) 時,libDispatch 會向主線程的 RunLoop 發(fā)送消息,RunLoop會被喚醒,并從消息中取得這個 block,并在回調(diào) CFRUNLOOP_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE() 里執(zhí)行這個 block。但這個邏輯僅限于 dispatch 到主線程,dispatch 到其他線程仍然是由 libDispatch 處理的。"
        @Test func RL14_seed001_theMainQueueRunsOnTheMainRunLoop() throws {
            #expect(try seeds("main-queue") == [
                "global queue block: on the main run loop's thread false",
                "main queue block: on the main run loop's thread true, mode default",
                "main run loop stopped",
            ])
        }
    }
}

/// Runs `harbor-seeds <name>` and returns its events (the `   | ` lines).
/// It must exit 0 within 30 s.
func seeds(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
    let (status, output, errors) = expectNoDescriptorLeak(sourceLocation: sourceLocation) { () -> (Int32?, String, String) in
        let child = Child([builtExecutable("harbor-seeds"), name], environment: baseEnvironment())
        let status = child.exitCode(before: .now + .seconds(30))
        return (status, child.allStdout(), child.stderrSoFar)
    }
    #expect(status == 0, "harbor-seeds \(name) ended with \(String(describing: status)): \(errors)",
            sourceLocation: sourceLocation)
    try #require(output.contains("== \(name):"), "harbor-seeds \(name) printed: \(output)", sourceLocation: sourceLocation)
    return output.split(separator: "\n").compactMap { line in
        line.hasPrefix("   | ") ? String(line.dropFirst(5)) : nil
    }
}

/// The events that start with `tag`, without it.
func lines(_ events: [String], tagged tag: String) -> [String] {
    events.compactMap { $0.hasPrefix(tag + " ") ? String($0.dropFirst(tag.count + 1)) : nil }
}

/// A Darwin log line as Harbor prints it: `<MyThread: 0x…>{number = 3, name = subThread}`
/// becomes `subThread` (Harbor threads have a name, not a description), and
/// `kCFRunLoopDefaultMode` becomes `default` (the name of `LoopMode.default`).
func darwinLine(_ line: String) -> String {
    var result = ""
    var rest = Substring(line)
    while let open = rest.firstIndex(of: "<"), let close = rest[open...].range(of: "}"),
          let name = rest[open..<close.lowerBound].range(of: "name = ") {
        result += rest[..<open] + rest[name.upperBound..<close.lowerBound]
        rest = rest[close.upperBound...]
    }
    return (result + rest).replacingOccurrences(of: "kCFRunLoopDefaultMode", with: "default")
}
