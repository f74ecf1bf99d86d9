// HarborMach — a `Mach.Port` and Harbor's messaging together: rights out
// and back, messages through it, notifications, and when a right dies.
import HarborMach
import HarborPorts
import HarborTestSupport
import Testing

/// Serialized, so each descriptor check sees no other test's ports.
@Suite(.serialized, .deadline) struct MachPortHarborTests {
    func references(_ name: mach_port_name_t, _ right: mach_port_right_t) -> mach_port_urefs_t {
        var count: mach_port_urefs_t = 0
        return mach_port_get_refs(mach_task_self_, name, right, &count) == KERN_SUCCESS ? count : 0
    }

    @Test func P01_aPortsMachNameIsItsHarborNumber() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let harborName = receive.withHarborRight { $0.name }
        let send = receive.makeSendRight()
        send.withBorrowedName { #expect(UInt64($0) == harborName.rawValue) }
        // Out as a Harbor right and back: the same name.
        let harbor = receive.takeHarborRight()
        #expect(send.withBorrowedName { references($0, MACH_PORT_RIGHT_SEND) } == 1)
        let back = Mach.Port(harbor)
        back.withBorrowedName { name, _ in #expect(UInt64(name) == harborName.rawValue) }
    }

    @Test func P03_messagesGoThroughMachPorts() throws {
        try expectNoDescriptorLeak {
            let receive = Mach.Port<Mach.ReceiveRight>()
            let send = receive.makeSendRight()
            try send.send(Message(id: 1, text: "hello"))
            let message = try receive.receive(timeout: .seconds(1))
            #expect(message.id == 1 && message.text == "hello")
            #expect(receive.tryReceive() == nil ? true : false)
            // A send-once right sends one message and is used up.
            try receive.makeSendOnceRight().send(Message(id: 2))
            #expect(try receive.receive(timeout: .seconds(1)).id == 2)
        }
    }

    @Test func P03_theGuidesExampleRuns() throws {
        try expectNoDescriptorLeak {
            // Docs/MachPort.md, "Harbor's messaging with a Mach.Port", as written there.
            let service = Mach.Port<Mach.ReceiveRight>()
            let replies = Mach.Port<Mach.ReceiveRight>()
            var request = Message(id: 7, text: "ping")
            request.setReplyRight(try replies.makeSendOnceRight().takeHarborRight())
            try service.makeSendRight().send(request)

            var received = try service.receive(timeout: .seconds(1))
            try received.reply(Message(id: 8, text: "pong"))
            #expect(try replies.receive(timeout: .seconds(1)).text == "pong")
        }
    }

    @Test func P02_rightsTravelInHarborMessagesAndComeBackAsMachPorts() throws {
        try expectNoDescriptorLeak {
            let inbox = Mach.Port<Mach.ReceiveRight>()
            let service = Mach.Port<Mach.ReceiveRight>()
            let replies = Mach.Port<Mach.ReceiveRight>()
            var request = Message(id: 7, text: "ping")
            request.attach(try service.makeSendRight().copyHarborRight())      // COPY_SEND
            request.setReplyRight(try replies.makeSendOnceRight().takeHarborRight())
            try inbox.makeSendRight().send(request)

            var received = try inbox.receive(timeout: .seconds(1))
            // The send right arrives and enters the name space under the
            // service's name, coalesced with the references already there.
            let send = Mach.Port<Mach.SendRight>(try received.takeSendRight(at: 0))
            let serviceName = service.withBorrowedName { name, _ in name }
            send.withBorrowedName { #expect($0 == serviceName) }
            #expect(references(serviceName, MACH_PORT_RIGHT_SEND) == 1)
            try send.send(Message(id: 8))
            #expect(try service.receive(timeout: .seconds(1)).id == 8)
            try received.reply(Message(id: 9, text: "pong"))
            #expect(try replies.receive(timeout: .seconds(1)).text == "pong")
        }
    }

    @Test func P02_aReceiveRightMovesOutInAMessageAndBack() throws {
        try expectNoDescriptorLeak {
            let carrier = Mach.Port<Mach.ReceiveRight>()
            let moving = Mach.Port<Mach.ReceiveRight>()
            let send = moving.makeSendRight()
            let name = send.withBorrowedName { $0 }
            try send.send(Message(id: 1))
            var message = Message(id: 2)
            message.attach(moving.takeHarborRight())                          // MOVE_RECEIVE
            #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 0)
            #expect(references(name, MACH_PORT_RIGHT_SEND) == 1)
            try carrier.makeSendRight().send(message)
            var received = try carrier.receive(timeout: .seconds(1))
            let back = Mach.Port(try received.takeReceiveRight(at: 0))
            back.withBorrowedName { backName, _ in #expect(backName == name) }
            #expect(try back.receive(timeout: .seconds(1)).id == 1)           // the queue moved with it
            try send.send(Message(id: 3))
            #expect(try back.receive(timeout: .seconds(1)).id == 3)
        }
    }

    @Test func P06_noSendersComesWhenTheLastMachSendRightEnds() throws {
        try expectNoDescriptorLeak {
            let receive = Mach.Port<Mach.ReceiveRight>()
            let notes = ReceiveRight()
            receive.withHarborRight { $0.requestNoSendersNotification(to: notes.makeSendOnceRight()) }
            let send = receive.makeSendRight()
            let copy = try send.copySendRight()
            _ = consume send
            #expect(notes.tryReceive() == nil ? true : false)     // one reference is left
            _ = consume copy
            let note = try notes.receive(timeout: .seconds(1))
            #expect(note.notification == .noSenders(port: receive.withHarborRight { $0.name }))
        }
    }

    @Test func P06_aSendOnceRightEndedUnusedIsReported() throws {
        let receive = Mach.Port<Mach.ReceiveRight>()
        _ = receive.makeSendOnceRight()                                        // dies at once, unused
        let note = try receive.receive(timeout: .seconds(1))
        #expect(note.notification == .sendOnce(port: receive.withHarborRight { $0.name }))
    }

    @Test func P04_sendingToADeadMachNameFailsAndReturnsTheMessage() {
        let send = Mach.Port<Mach.ReceiveRight>().makeSendRight()    // the temporary receive right dies at the `;`
        do {
            try send.send(Message(id: 4, text: "lost?"))
            Issue.record("a send to a dead port succeeded")
        } catch {
            #expect(error.code == .deadName)
            #expect(error.takeUndeliveredMessage()?.text == "lost?")
        }
        #expect(throws: Mach.PortRightError.deadName) { _ = try send.copyHarborRight() }
    }

    @Test func P01_referencesStayExactUnderThreads() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let name = receive.withBorrowedName { name, _ in name }
        let threads = (0 ..< 4).map { _ in
            TestThread { () -> Int in
                var failures = 0
                for _ in 0 ..< 500 {
                    if mach_port_insert_right(mach_task_self_, name, name,
                                              mach_msg_type_name_t(MACH_MSG_TYPE_MAKE_SEND)) != KERN_SUCCESS { failures += 1 }
                    let send = Mach.Port<Mach.SendRight>(name: name)      // owns the one just made
                    do { _ = try send.copySendRight() } catch { failures += 1 }
                    _ = consume send
                }
                return failures
            }
        }
        #expect(threads.map { $0.join() } == [0, 0, 0, 0])
        #expect(references(name, MACH_PORT_RIGHT_SEND) == 0)
        #expect(receive.makeSendCount == 2000)
        #expect(receive.withHarborRight { $0.status.sendRights } == 0)
    }

    @Test func P01_aGuardedReceiveRightCannotBeDestroyedByNameAlone() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        receive.withBorrowedName { name, context in
            #expect(mach_port_mod_refs(mach_task_self_, name, MACH_PORT_RIGHT_RECEIVE, -1) == KERN_INVALID_RIGHT)
            #expect(mach_port_destruct(mach_task_self_, name, 0, context &+ 1) == KERN_INVALID_ARGUMENT)
            #expect(mach_port_unguard(mach_task_self_, name, context &+ 1) == KERN_INVALID_ARGUMENT)
            #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 1)
        }
    }

    @Test func P01_namesOutsideTheNameSpaceAreRefused() {
        var name = mach_port_name_t(0)
        var refs = mach_port_urefs_t(0)
        #expect(mach_port_get_refs(mach_task_self_, 0x7FFF_FFF0, MACH_PORT_RIGHT_SEND, &refs) == KERN_INVALID_NAME)
        #expect(mach_port_allocate(mach_task_self_, MACH_PORT_RIGHT_PORT_SET, &name) == KERN_INVALID_VALUE)
        #expect(mach_port_allocate(mach_task_self_ &+ 1, MACH_PORT_RIGHT_RECEIVE, &name) == KERN_INVALID_TASK)
        #expect(mach_port_deallocate(mach_task_self_, 0x7FFF_FFF0) == KERN_INVALID_NAME)
        #expect(mach_port_deallocate(mach_task_self_, MACH_PORT_DEAD) == KERN_SUCCESS)
    }
}
