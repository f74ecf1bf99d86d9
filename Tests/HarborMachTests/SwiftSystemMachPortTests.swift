// HarborMach — code written against swift-system's Darwin `Mach.Port` API,
// as a Darwin program uses it, with Darwin's own `mach_port_*` calls to
// read what the kernel's name space holds.
//
// PORTED BY CHANGING ONLY THE IMPORTS. On Darwin this file begins with
//     import Darwin.Mach
//     import System          // or SystemPackage
//     import Testing
// and here with `import HarborMach` and `import Testing`. Nothing below this
// comment's imports differs: the same types, members, constants and calls.
// (The tests exercise what swift-system's own MachPortTests exercise,
// written anew.)
import HarborMach
import HarborTestSupport
import Testing

/// Serialized: every test reads the one process-wide name space.
@Suite(.serialized, .deadline) struct SwiftSystemMachPortTests {
    /// User references `name` holds of `right`; 0 when the name is gone.
    func references(_ name: mach_port_name_t, _ right: mach_port_right_t) -> mach_port_urefs_t {
        var count: mach_port_urefs_t = .max
        let result = mach_port_get_refs(mach_task_self_, name, right, &count)
        if result == KERN_INVALID_NAME { return 0 }
        #expect(result == KERN_SUCCESS)
        return count
    }

    /// Owns `name` for the length of this call, then lets it go.
    func holdReceiveRight(_ name: mach_port_name_t) -> mach_port_urefs_t {
        let owned = Mach.Port<Mach.ReceiveRight>(name: name)
        return owned.withBorrowedName { references($0, MACH_PORT_RIGHT_RECEIVE) }
    }

    @Test func P01_aReceiveRightIsDestroyedWhenItsPortEnds() {
        var name: mach_port_name_t = 0xFFFF_FFFF
        #expect(mach_port_allocate(mach_task_self_, MACH_PORT_RIGHT_RECEIVE, &name) == KERN_SUCCESS)
        #expect(name != 0xFFFF_FFFF && name != mach_port_name_t(MACH_PORT_NULL))
        #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 1)
        #expect(holdReceiveRight(name) == 1)
        #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 0)
    }

    /// Owns a send reference under `name` for the length of this call.
    func holdSendRight(_ name: mach_port_name_t) -> mach_port_urefs_t {
        let send = Mach.Port<Mach.SendRight>(name: name)
        return send.withBorrowedName { references($0, MACH_PORT_RIGHT_SEND) }
    }

    @Test func P01_aSendRightGivesBackItsReferenceWhenItEnds() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        receive.withBorrowedName { name, _ in
            #expect(mach_port_insert_right(mach_task_self_, name, name,
                                           mach_msg_type_name_t(MACH_MSG_TYPE_MAKE_SEND)) == KERN_SUCCESS)
            #expect(holdSendRight(name) == 1)
            #expect(references(name, MACH_PORT_RIGHT_SEND) == 0)
            #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 1)
        }
    }

    @Test func P02_aRelinquishedSendRightKeepsItsReference() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let name = {
            let send = receive.makeSendRight()
            #expect(send.withBorrowedName { references($0, MACH_PORT_RIGHT_SEND) } == 1)
            return send.relinquish()
        }()
        #expect(references(name, MACH_PORT_RIGHT_SEND) == 1)
        receive.withBorrowedName { receiveName, _ in
            #expect(receiveName == name)      // a port's send and receive rights share one name
            #expect(references(receiveName, MACH_PORT_RIGHT_RECEIVE) == 1)
        }
        #expect(mach_port_deallocate(mach_task_self_, name) == KERN_SUCCESS)
        #expect(references(name, MACH_PORT_RIGHT_SEND) == 0)
    }

    @Test func P02_aRelinquishedSendOnceRightKeepsItsReference() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let name = {
            let once = receive.makeSendOnceRight()
            #expect(once.withBorrowedName { references($0, MACH_PORT_RIGHT_SEND_ONCE) } == 1)
            return once.relinquish()
        }()
        #expect(references(name, MACH_PORT_RIGHT_SEND_ONCE) == 1)
        receive.withBorrowedName { #expect(references($0, MACH_PORT_RIGHT_RECEIVE) == 1) }
        #expect(mach_port_deallocate(mach_task_self_, name) == KERN_SUCCESS)
        #expect(references(name, MACH_PORT_RIGHT_SEND_ONCE) == 0)
    }

    @Test func P01_aRelinquishedReceiveRightOutlivesItsPortValue() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        #expect(receive.withBorrowedName { references($0, MACH_PORT_RIGHT_RECEIVE) } == 1)
        let name = receive.unguardAndRelinquish()
        #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 1)
        #expect(mach_port_mod_refs(mach_task_self_, name, MACH_PORT_RIGHT_RECEIVE, -1) == KERN_SUCCESS)
        #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 0)
    }

    @Test func P02_theMakeSendCountCanBeSet() {
        var receive = Mach.Port<Mach.ReceiveRight>()
        #expect(receive.makeSendCount == 0)
        receive.makeSendCount = 7
        #expect(receive.makeSendCount == 7)
        _ = receive.makeSendRight()
        #expect(receive.makeSendCount == 8)
    }

    func madeSendRight() -> Mach.Port<Mach.SendRight> {
        let receive = Mach.Port<Mach.ReceiveRight>()
        #expect(receive.makeSendCount == 0)
        let send = receive.makeSendRight()
        #expect(receive.makeSendCount == 1)
        return send
    }

    @Test func P02_makingASendRightCountsIt() {
        _ = madeSendRight()
    }

    @Test func P02_aSendOnceRightIsNotCountedAsMadeSend() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let before = receive.makeSendCount
        _ = receive.makeSendOnceRight()
        #expect(receive.makeSendCount == before)
    }

    @Test func P02_aSendOnceRightHasANameOfItsOwn() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let once = receive.makeSendOnceRight()
        let other = receive.makeSendOnceRight()
        receive.withBorrowedName { receiveName, _ in
            once.withBorrowedName { onceName in
                #expect(onceName != receiveName)
                other.withBorrowedName { #expect($0 != onceName && $0 != receiveName) }
            }
        }
    }

    @Test func P02_copyingASendRightAddsAReferenceNotAMakeSend() throws {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let send = receive.makeSendRight()
        #expect(receive.makeSendCount == 1)
        let copy = try send.copySendRight()
        #expect(receive.makeSendCount == 1)
        send.withBorrowedName { name in
            copy.withBorrowedName { #expect($0 == name) }
            #expect(references(name, MACH_PORT_RIGHT_SEND) == 2)
        }
    }

    @Test func P06_copyingADeadNameThrows() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let send = receive.makeSendRight()
        #expect(throws: Never.self) { _ = try send.copySendRight() }
        _ = consume receive                  // the port dies: `send` is a dead name
        #expect(throws: Mach.PortRightError.deadName) { _ = try send.copySendRight() }
    }

    @Test func P06_copyingTheDeadNameConstantThrows() {
        let send = Mach.Port<Mach.SendRight>(name: 0xFFFF_FFFF)
        #expect(throws: Mach.PortRightError.deadName) { _ = try send.copySendRight() }
    }

    @Test func P01_aGuardedReceiveRightIsAdoptedWithItsGuard() {
        var name = mach_port_name_t(MACH_PORT_NULL)
        #expect(mach_port_allocate(mach_task_self_, MACH_PORT_RIGHT_RECEIVE, &name) == KERN_SUCCESS)
        let context = mach_port_context_t.random(in: 1 ... .max)
        #expect(mach_port_guard(mach_task_self_, name, context, 0) == KERN_SUCCESS)
        do {
            let right = Mach.Port<Mach.ReceiveRight>(name: name, context: context)
            right.withBorrowedName {
                #expect($0 == name)
                #expect($1 == context)
            }
        }
        #expect(references(name, MACH_PORT_RIGHT_RECEIVE) == 0)
    }

    @Test func P06_sendRightsOfADeadPortBecomeDeadNamesAndEndCleanly() {
        let receive = Mach.Port<Mach.ReceiveRight>()
        let send = receive.makeSendRight()
        let once = receive.makeSendOnceRight()
        let sendName = send.withBorrowedName { $0 }
        let onceName = once.withBorrowedName { $0 }
        #expect(references(sendName, MACH_PORT_RIGHT_DEAD_NAME) == 0)
        _ = consume receive
        #expect(references(sendName, MACH_PORT_RIGHT_SEND) == 0)
        #expect(references(sendName, MACH_PORT_RIGHT_DEAD_NAME) == 1)
        #expect(references(onceName, MACH_PORT_RIGHT_DEAD_NAME) == 1)
        _ = consume send
        _ = consume once
        var kind: mach_port_urefs_t = 0
        #expect(mach_port_get_refs(mach_task_self_, sendName, MACH_PORT_RIGHT_DEAD_NAME, &kind) == KERN_INVALID_NAME)
        #expect(mach_port_get_refs(mach_task_self_, onceName, MACH_PORT_RIGHT_DEAD_NAME, &kind) == KERN_INVALID_NAME)
    }
}
