// Harbor — Foundation's blocking primitive: two threads taking turns under an NSCondition.
import Foundation

/// The client hands the turn to the server and waits on the condition until
/// it comes back, the blocking shape of `receive()` with Foundation's lock.
final class ConditionPingPong: BenchmarkVariant {
    let name = "foundation-condition"
    let label = "NSCondition: set turn, signal, wait for the turn back"

    /// @unchecked: `turn` is read and written only with `condition` locked.
    final class Shared: @unchecked Sendable {
        let condition = NSCondition()
        /// 0: client's turn, 1: server's turn, 2: server must stop.
        var turn = 0
    }

    private let server: SharedServerThread
    private let shared = Shared()

    init(server: SharedServerThread) { self.server = server }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let shared = self.shared
        shared.turn = 0
        server.thread.start {
            shared.condition.lock()
            defer { shared.condition.unlock() }
            while true {
                while shared.turn == 0 { shared.condition.wait() }
                if shared.turn == 2 { return }
                shared.turn = 0
                shared.condition.signal()
            }
        }
        measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            shared.condition.lock()
            shared.turn = 1
            shared.condition.signal()
            while shared.turn != 0 { shared.condition.wait() }
            shared.condition.unlock()
        }
        shared.condition.lock()
        shared.turn = 2
        shared.condition.signal()
        shared.condition.unlock()
        server.thread.waitUntilIdle()
    }

    func stop() {}
}
