// Harbor — P06 across a move: a no-senders request that travelled with its
// receive right fires in the new process when the last sender anywhere
// goes, though nobody there receives on the port.
import Glibc
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.serialized, .deadline(.seconds(120)))
struct MovedNoSendersTests {
    @Test func P06_aMovedNoSendersRequestFiresWithNobodyReceivingThere() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let keeper = try Peer(home: home)
            let sender = try Peer(home: home)
            let moving = ReceiveRight()
            let notifications = ReceiveRight()
            moving.requestNoSendersNotification(to: notifications.makeSendOnceRight())
            var hold = Message(id: PeerCommand.hold)
            hold.attach(moving.makeSendRight())
            try sender.port.send(hold)
            #expect(try sender.request(Message(id: PeerCommand.echo, text: "sync")).text == "sync")
            // The keeper holds the port and never receives on it.
            var keep = Message(id: PeerCommand.keep)
            keep.attach(moving)
            #expect(try keeper.request(keep).text == "kept")
            sender.kill()
            let notification = try notifications.receive(timeout: .seconds(10))
            #expect(notification.id == PortNotification.ID.noSenders, "the keeper's process heard the last sender go")
            keeper.stop()
        }
    }
}
