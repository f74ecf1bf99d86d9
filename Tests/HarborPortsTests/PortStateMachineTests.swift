// Harbor — the port's rules without a kernel: the pure state machine.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

@Suite(.deadline) struct PortStateMachineTests {
    private func content(_ id: Int32, counted: Bool = true) -> MessageContent {
        var content = MessageContent(id: id, body: [], trailer: MessageTrailer(sender: .current))
        content.countsAgainstLimit = counted
        return content
    }

    @Test func P04_readinessChangesOnlyAtTheEmptyEdges() {
        var machine = PortStateMachine()
        guard case .enqueued(true) = machine.enqueue(content(1)) else { Issue.record("first message"); return }
        guard case .enqueued(false) = machine.enqueue(content(2)) else { Issue.record("second message"); return }
        let port = PortName(rawValue: 1)
        #expect(machine.dequeue(receivingPort: port)?.becameEmpty == false)
        #expect(machine.dequeue(receivingPort: port)?.becameEmpty == true)
        #expect(machine.dequeue(receivingPort: port)?.content.id == nil)
    }

    @Test func P04_fullQueueRefusesCountedButNotSendOnceMessages() {
        var machine = PortStateMachine()
        _ = machine.setQueueLimit(1)
        _ = machine.enqueue(content(1))
        guard case .full = machine.enqueue(content(2)) else { Issue.record("expected full"); return }
        guard case .enqueued = machine.enqueue(content(3, counted: false)) else { Issue.record("send-once"); return }
        #expect(machine.countedMessages == 1)
        #expect(machine.queue.count == 2)
    }

    @Test func P04_dequeuingACountedMessageWakesOneBlockedSender() {
        var machine = PortStateMachine()
        _ = machine.setQueueLimit(1)
        _ = machine.enqueue(content(1))
        let first = Parker(), second = Parker()
        machine.senderWillBlock(first)
        machine.senderWillBlock(second)
        #expect(machine.dequeue(receivingPort: PortName(rawValue: 1))?.senderToWake === first)
        #expect(machine.senderStoppedWaiting(first) == false, "already handed a slot")
        #expect(machine.senderStoppedWaiting(second) == true)
    }

    @Test func P06_lastSendRightReleasedFiresTheNoSendersRequestOnce() {
        var machine = PortStateMachine()
        let target = SendOnceToken(port: PortCore())
        machine.sendRightMade()
        machine.sendRightMade()
        _ = machine.requestNoSenders(target)
        #expect(machine.sendRightReleased() == nil)
        #expect(machine.sendRightReleased() === target)
        machine.sendRightMade()
        #expect(machine.sendRightReleased() == nil, "a request fires once")
        _ = target.markUsed()
    }

    @Test func P06_destructionHandsBackEverythingToRelease() {
        var machine = PortStateMachine()
        let target = SendOnceToken(port: PortCore())
        _ = machine.enqueue(content(1))
        #expect(machine.requestDeadName(target) == nil)
        let destruction = machine.destroy()
        #expect(machine.isDead)
        #expect(destruction.drained.count == 1)
        #expect(destruction.deadNameTargets.first === target)
        guard case .dead = machine.enqueue(content(2)) else { Issue.record("expected dead"); return }
        #expect(machine.requestDeadName(target) === target, "a dead port notifies at once")
        _ = target.markUsed()
    }
}
