// Harbor — P05: port sets.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

@Suite(.deadline) struct PortSetTests {
    @Test func P05_aSetReceivesFromEveryMemberAndSaysWhichPort() throws {
        try expectNoDescriptorLeak {
            let set = try PortSet()
            let first = ReceiveRight()
            let second = ReceiveRight()
            try set.insert(first)
            try set.insert(second)
            #expect(set.members == [first.name, second.name])
            try second.makeSendRight().send(Message(id: 2))
            try first.makeSendRight().send(Message(id: 1))
            var seen: [PortName: Int32] = [:]
            for _ in 0..<2 {
                let message = try set.receive(timeout: .seconds(5))
                seen[message.trailer.port!] = message.id
            }
            #expect(seen == [first.name: 1, second.name: 2])
            expectPortError(.timedOut) { _ = try set.receive(timeout: .milliseconds(10)) }
        }
    }

    @Test func P05_aSetReceiveWaitsForAMessageFromAnotherThread() throws {
        try expectNoDescriptorLeak { () throws in
            let set = try PortSet()
            let member = ReceiveRight()
            try set.insert(member)
            let send = member.makeSendRight()
            let sender = TestThread { (try? send.send(Message(id: 5))) != nil }
            #expect(try set.receive(timeout: .seconds(10)).id == 5)
            #expect(sender.join())
        }
    }

    @Test func P05_aPortIsInAtMostOneSet() throws {
        try expectNoDescriptorLeak { () throws in
            let a = try PortSet()
            let b = try PortSet()
            let port = ReceiveRight()
            try a.insert(port)
            #expect(a.contains(port) == true)
            try b.insert(port)                        // moves it, as mach_port_move_member
            #expect(a.contains(port) == false)
            #expect(b.contains(port) == true)
            try port.makeSendRight().send(Message(id: 1))
            expectPortError(.timedOut) { _ = try a.receive(timeout: .milliseconds(10)) }
            #expect(try b.receive(timeout: .seconds(5)).id == 1)
            #expect(port.status.isInSet)
            b.remove(port)
            #expect(!port.status.isInSet)
            #expect(b.members.isEmpty)
        }
    }

    @Test func P05_aDestroyedPortLeavesItsSet() throws {
        try expectNoDescriptorLeak {
            let set = try PortSet()
            do {
                let port = ReceiveRight()
                try set.insert(port)
                try port.makeSendRight().send(Message(id: 1))
                #expect(set.members.count == 1)
            }
            #expect(set.members.isEmpty)
            expectPortError(.timedOut) { _ = try set.receive(timeout: .milliseconds(10)) }
        }
    }

    @Test func P05_theSetIsADescriptorReadableWhileAnyMemberHasAMessage() throws {
        try expectNoDescriptorLeak { () throws in
            let set = try PortSet()
            let port = ReceiveRight()
            try set.insert(port)
            #expect(!isReadable(set.core.descriptor))
            try port.makeSendRight().send(Message(id: 1))
            #expect(isReadable(set.core.descriptor))
            _ = try set.receive(timeout: .zero)
            #expect(!isReadable(set.core.descriptor))
        }
    }
}
