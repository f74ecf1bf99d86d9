// Harbor — at scale: no descriptor leaked over 100,000 cycles, 100,000 live ports.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct ScaleTests {
    /// Each cycle creates two ports, makes the first one's descriptor exist,
    /// sends a message carrying a send right, a send-once right and a receive
    /// right, receives it, takes the rights out, uses them and destroys it all.
    @Test func P06_100kCyclesOfCreateSendReceiveDestroyLeaveNoDescriptor() throws {
        try expectNoDescriptorLeak {
            for cycle in 0..<100_000 {
                let port = ReceiveRight()
                _ = try port.withReadinessDescriptor { $0 }      // the descriptor exists
                let passenger = ReceiveRight()
                var message = Message(id: Int32(cycle & 0xFFFF), body: [1, 2, 3])
                message.attach(passenger.makeSendRight())
                message.attach(passenger.makeSendOnceRight())
                message.attach(passenger)
                message.setReplyRight(port.makeSendOnceRight())
                try port.makeSendRight().send(message)

                var received = try port.receive(timeout: .zero)
                let send = try received.takeSendRight(at: 0)
                let once = try received.takeSendOnceRight(at: 1)
                let moved = try received.takeReceiveRight(at: 2)
                try once.send(Message(id: 1))
                try send.send(Message(id: 2))
                guard try moved.receive(timeout: .zero).id == 1, try moved.receive(timeout: .zero).id == 2 else {
                    Issue.record("cycle \(cycle): carried rights did not deliver in order")
                    return
                }
                try received.reply(Message(id: 3))
                guard try port.receive(timeout: .zero).id == 3 else {
                    Issue.record("cycle \(cycle): the reply did not arrive")
                    return
                }
            }
        }
    }

    @Test func P04_100kLivePortsEachCarryAMessage() throws {
        raiseDescriptorLimit(to: 1 << 20)
        final class Holder: Sendable {
            let receive: ReceiveRight
            init() { receive = ReceiveRight() }
        }
        try expectNoDescriptorLeak {
            let holders = (0..<100_000).map { _ in Holder() }
            for (index, holder) in holders.enumerated() {
                try holder.receive.makeSendRight().send(Message(id: Int32(index)))
            }
            #expect(holders.allSatisfy { $0.receive.status.queuedMessages == 1 })
            // Make as many of them descriptor-backed as this process may
            // (an unprivileged process cannot raise the hard limit), and check
            // each polls readable while its message waits.
            // Two descriptors each: an epoll set over an eventfd (Docs/CrossProcess.md).
            let withDescriptors = min(holders.count, max(0, raiseDescriptorLimit(to: 1 << 20) - openDescriptorCount() - 64) / 2)
            for holder in holders.prefix(withDescriptors) {
                let readable = try holder.receive.withReadinessDescriptor { isReadable($0) }
                guard readable else { Issue.record("\(holder.receive.name) not readable"); return }
            }
            for (index, holder) in holders.enumerated() {
                let id = try holder.receive.receive(timeout: .zero).id
                guard id == Int32(index) else { Issue.record("port \(index) delivered \(id)"); return }
            }
        }
    }
}
