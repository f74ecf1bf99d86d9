import Testing
@testable import HarborPorts
@Test func smoke() throws { let r = ReceiveRight(); let s = r.makeSendRight(); try s.send(Message(id: 1)); #expect(try r.receive().id == 1) }
