// Harbor — the seed articles' experiments (Sources/harbor-seeds), asserted.
@testable import harbor_seeds
import Testing

extension RunLoopTests {
    /// Each test runs the very experiment `harbor-seeds <name>` runs and
    /// asserts its event log is the one the article describes.
    @Suite struct SeedExperimentTests {
        @Test func RL09_RL17_seed000_aPortKeepsAWorkerAlive_andRunModeReturnsAfterOneSource() {
            let log = PortKeepAlive.run()
            #expect(PortKeepAlive.matches(log), "\(log)")
        }

        @Test func RL05_seed000_aPortInAnotherModeLetsTheRunFinishAtOnce() {
            let log = PortInOtherMode.run()
            #expect(PortInOtherMode.matches(log), "\(log)")
        }

        @Test func RL07_seed003_repeatingTimerKeepsTheThreadAlive_oneShotDoesNot() {
            let log = TimerKeepAlive.run()
            #expect(TimerKeepAlive.matches(log), "\(log)")
        }

        @Test func RL11_seed000_modeSwitchingWorker_beforeAndAfterTheCorrection() {
            let log = ModeSwitching.run()
            #expect(ModeSwitching.matches(log), "\(log)")
            #expect(log.contains("[original] the timer keeps firing in tracking; the switch never ran"))
            #expect(log.contains("[fix 1: addCommonMode] changeSubThreadRunLoopMode: default"))
            #expect(log.contains("[fix 2: perform inModes] changeSubThreadRunLoopMode: default"))
        }

        @Test func RL10_seed002_observerLogsEveryActivityAroundATimer() {
            let log = ObserverLog.run()
            #expect(ObserverLog.matches(log), "\(log)")
        }

        @Test func RL04_RL07_seed000_commonModesTimerFiresInACustomMode() {
            let log = CommonModeTimer.run()
            #expect(CommonModeTimer.matches(log), "\(log)")
        }
    }
}
