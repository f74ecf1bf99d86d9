// HarborMach — a `Mach.Port` talking to another process through Harbor's
// messaging (harbor-peer), and its send right turning into a dead name
// when that process is killed.
import Glibc
import HarborMach
import HarborPorts
import HarborPeerCommands
import HarborTestSupport
import Testing
import HarborTransport

@Suite(.serialized, .deadline) struct MachPortCrossProcessTests {
    @Test func P07_P06_aMachPortTalksToAnotherProcessAndSeesItDie() throws {
        try expectNoDescriptorLeak {
            let home = Mach.Port<Mach.ReceiveRight>()
            var first = Message(id: 0, text: "serve")
            first.attach(try home.makeSendRight().copyHarborRight())
            let child = try ChildProcess.spawn(executable: builtExecutable("harbor-peer"), initialMessage: first)
            // Killed and reaped however the test ends (once reaped, again is a no-op).
            defer { reapChild(child.pid, patience: .zero) }
            var hello = try home.receive(timeout: .seconds(30))
            #expect(hello.id == PeerCommand.hello)
            let peer = Mach.Port<Mach.SendRight>(try hello.takeSendRight(at: 0))

            // A request with a Mach send-once right as its reply port.
            let replies = Mach.Port<Mach.ReceiveRight>()
            var echo = Message(id: PeerCommand.echo, text: "over there")
            echo.setReplyRight(try replies.makeSendOnceRight().takeHarborRight())
            try peer.send(echo)
            #expect(try replies.receive(timeout: .seconds(30)).text == "over there")

            // A Mach send right handed to the peer, which sends on it.
            var use = Message(id: PeerCommand.use)
            use.attach(try home.makeSendRight().copyHarborRight())
            try peer.send(use)
            let used = try home.receive(timeout: .seconds(30))
            #expect(used.id == PeerCommand.used && used.text == "used by \(child.pid)")
            #expect(used.trailer.sender.pid == child.pid)

            // The peer dies: its port is gone, and this process's send
            // right to it is a dead name, as Mach turns it into one.
            let name = peer.withBorrowedName { $0 }
            #expect(throws: Never.self) { _ = try peer.copySendRight() }
            child.kill(SIGKILL)
            reapChild(child.pid)
            #expect(throws: Mach.PortRightError.deadName) { _ = try peer.copySendRight() }
            var dead: mach_port_urefs_t = 0
            #expect(mach_port_get_refs(mach_task_self_, name, MACH_PORT_RIGHT_DEAD_NAME, &dead) == KERN_SUCCESS)
            #expect(dead == 1)                         // the one reference `peer` owns
        }
    }
}
