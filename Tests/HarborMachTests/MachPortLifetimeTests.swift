// HarborMach — when a `~Copyable` right dies, and the idioms that keep one
// alive (Docs/MachPort.md, "When a right dies").
import HarborMach
import HarborPorts
import HarborTestSupport
import Testing

@Suite(.serialized, .deadline) struct MachPortLifetimeTests {
    func receiveReferences(_ name: mach_port_name_t) -> mach_port_urefs_t {
        var count: mach_port_urefs_t = 0
        return mach_port_get_refs(mach_task_self_, name, MACH_PORT_RIGHT_RECEIVE, &count) == KERN_SUCCESS ? count : 0
    }

    @Test func P01_aTemporaryReceiveRightDiesAtTheEndOfItsStatement() {
        // Nothing holds the receive right: it ends with the statement, and
        // the send right made from it is a dead name from the next line on.
        let send = Mach.Port<Mach.ReceiveRight>().makeSendRight()
        #expect(throws: Mach.PortRightError.deadName) { _ = try send.copySendRight() }
    }

    @Test func P01_assigningToUnderscoreDestroysAtOnce() {
        var name = mach_port_name_t(MACH_PORT_NULL)
        #expect(mach_port_allocate(mach_task_self_, MACH_PORT_RIGHT_RECEIVE, &name) == KERN_SUCCESS)
        _ = Mach.Port<Mach.ReceiveRight>(name: name)
        #expect(receiveReferences(name) == 0)
    }

    @Test func P01_withExtendedLifetimeKeepsAPortAliveThroughItsBody() throws {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let name = receive.withBorrowedName { name, _ in name }
        let send = receive.makeSendRight()          // the last use of `receive` but one
        try withExtendedLifetime(receive) {
            // Only the name and the send right are used here; the port is
            // alive because `withExtendedLifetime` borrows it until `}`.
            #expect(receiveReferences(name) == 1)
            try send.send(Message(id: 1), timeout: .zero)
            #expect(throws: Never.self) { _ = try send.copySendRight() }
        }
        #expect(receive.tryReceive()?.id == 1)
        _ = consume receive
        #expect(receiveReferences(name) == 0)
        #expect(throws: Mach.PortRightError.deadName) { _ = try send.copySendRight() }
    }

    @Test func P01_consumingAtTheEndKeepsAPortAliveUntilThere() throws {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let name = receive.withBorrowedName { name, _ in name }
        let send = receive.makeSendRight()
        for id in 1 ... 3 {                          // work that never mentions `receive`
            try send.send(Message(id: Int32(id)), timeout: .zero)
            #expect(receiveReferences(name) == 1)
        }
        #expect(throws: Never.self) { _ = try send.copySendRight() }
        _ = consume receive                          // the port ends here, and not before
        #expect(receiveReferences(name) == 0)
        do {
            try send.send(Message(id: 4), timeout: .zero)
            Issue.record("the port outlived `consume`")
        } catch {
            #expect(error.code == .deadName)
        }
    }
}
