// Harbor — O09: a port's traffic from another process, captured by a tap,
// written as pcapng and read back by the real tshark through the
// repository's Wireshark dissector (Tools/wireshark/harbor.lua).
import Glibc
import Harbor
import HarborCapture
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem

@Suite(.serialized, .deadline(.seconds(300)))
struct CaptureTests {
    @Test(.enabled(if: Tshark.path != nil, "tshark is not installed (Scripts/install-deps.sh installs it)"))
    func O09_aCrossProcessExchangeCapturedToPcapngDecodesInTshark() throws {
        let home = ReceiveRight()
        try home.setQueueLimit(64)
        let tap = try home.tap(bodyPrefix: 48, capacity: 256)
        let peer = try Peer(home: home)
        let toHome = home.makeSendRight()
        // The peer sends to home: a burst of texts, a large payload, sealed
        // regions, send rights, descriptors (each request answered on a port of its own).
        #expect(try peer.request(Message(id: PeerCommand.burst, text: "5")).text == "sent")
        for (command, argument) in [(PeerCommand.payload, "100000"), (PeerCommand.regions, "2 8192"),
                                    (PeerCommand.rights, "1 3"), (PeerCommand.files, "1 2")] {
            var request = Message(id: command, text: argument)
            request.attach(toHome)
            #expect(try peer.request(request).text.hasPrefix("sent="))
        }
        // What home receives, after the hello Peer took.
        var received: [(id: Int32, size: Int, rights: Int, files: Int, regions: Int, pid: pid_t)] = []
        while received.count < 10, let message = try? home.receive(timeout: .seconds(10)) {
            received.append((message.id, message.body.count, message.carriedRights.count, message.carriedFileCount,
                             message.content.regions.count, message.trailer.sender.pid))
        }
        #expect(received.count == 10)
        let records = tap.records()
        #expect(tap.dropped == 0)
        #expect(records.count == 11, "the hello, then every message received")
        guard records.count == 11 else { return }
        #expect(records[0].id == PeerCommand.hello && records[0].sendRights == 1 && records[0].sender.pid == peer.pid)
        for (record, message) in zip(records.dropFirst(), received) {
            #expect(record.id == message.id && record.bodySize == message.size && record.sender.pid == message.pid)
            #expect(record.sendRights == message.rights && record.files == message.files
                        && record.regionSizes.count == message.regions)
            #expect(record.bodyPrefix.count == min(48, message.size))
        }
        #expect(records.allSatisfy { $0.sender.pid == peer.pid && $0.sender.uid == getuid() })
        #expect(records.contains { $0.id == PeerCommand.payload && $0.bodySize + $0.regionSizes.reduce(0, +) >= 100_000 })
        #expect(records.filter { $0.regionSizes == [8192] }.count == 2)

        let directory = TemporaryDirectory(prefix: "harbor-capture")
        var writer = PcapngWriter(port: home.name, description: "O09 test", comment: "a test capture")
        for record in records { writer.append(record) }
        writer.finish(admitted: tap.admitted, dropped: tap.dropped, wallNanoseconds: records.last!.wallNanoseconds)
        let file = directory.path + "/exchange.pcapng"
        #expect(Tshark.write(writer.takeOutput(), to: file))

        let rows = try Tshark.fields(file, ["harbor.id", "harbor.size", "harbor.sender_pid", "harbor.rights.send",
                                            "harbor.files", "harbor.regions", "harbor.region_size", "harbor.index",
                                            "harbor.prefix_length"])
        #expect(rows.count == records.count)
        for (row, record) in zip(rows, records) {
            let expected = ["\(record.id)", "\(record.bodySize)", "\(record.sender.pid)", "\(record.sendRights)",
                            "\(record.files)", "\(record.regionSizes.count)",
                            record.regionSizes.map(String.init).joined(separator: ","), "\(record.index)",
                            "\(record.bodyPrefix.count)"]
            #expect(row == expected)
        }
        let detail = try Tshark.run(["-r", file, "-V"])
        #expect(!detail.contains("Malformed") && !detail.contains("Lua Error"), "\(detail.suffix(2000))")
        #expect(detail.contains("Sender (kernel-verified): pid \(peer.pid)"))
        peer.stop()
    }

    @Test(.enabled(if: Tshark.path != nil, "tshark is not installed (Scripts/install-deps.sh installs it)"))
    func O09_hostileRecordsWriteAndDecodeWithoutMalformedPackets() throws {
        // Harbor's own formats first: a look-up's name, a coded body, text.
        let port = ReceiveRight()
        try port.setQueueLimit(1024)
        let tap = try port.tap(bodyPrefix: 256, capacity: 2048)
        let sender = port.makeSendRight()
        try sender.send(Message(id: 0x4842_0001, text: "com.example.echo"))
        try sender.send(Message(id: 0x5850_4304, body: [1, 0x0A, 2, 0xFF]))
        try sender.send(Message(id: 3, text: "plain text"))
        // Then bodies of odd bytes under every id Harbor knows and a few it does not.
        var generator = SystemRandomNumberGenerator()
        let ids: [Int32] = [0x4842_0001, 0x4842_0002, 0x4842_0005, 0x5049_4E47, 0x5850_4301, 0x4841_4301, 0, -1,
                            .max, .min]
        for round in 0..<300 {
            let count = round % 50 == 0 ? 65_536 : Int.random(in: 0...300, using: &generator)
            var body = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 7 == 0, !body.isEmpty { body[0] = 1 }  // looks coded
            if round % 11 == 0 { body = Array("com.example.\(round)".utf8) + [0xFF] }  // a name gone wrong
            try sender.send(Message(id: ids[round % ids.count], body: body), timeout: .zero)
        }
        var records = tap.records()
        #expect(records.count == 303)
        // And records no port makes: sizes past every field, many regions, relays.
        for index in 0..<20 {
            var record = records[index]
            record.bodySize = .max
            record.queueDepth = .max
            record.sendRights = .max
            record.files = .max
            record.regionSizes = Array(repeating: .max, count: index * 10)
            record.relayedBy = ProcessIdentity(pid: -1, uid: .max, gid: .max)
            record.claimedOriginalSender = ProcessIdentity(pid: .max, uid: 0, gid: 0)
            record.droppedBefore = .max
            record.wallNanoseconds = index % 2 == 0 ? -1 : .max
            records.append(record)
        }
        let directory = TemporaryDirectory(prefix: "harbor-capture")
        var writer = PcapngWriter(port: port.name, description: "hostile \u{0}\u{FFFF}\u{1F600}",
                                  comment: String(repeating: "é", count: 5000))
        for record in records { writer.append(record) }
        writer.finish(admitted: .max, dropped: .max, wallNanoseconds: .min)
        let file = directory.path + "/hostile.pcapng"
        #expect(Tshark.write(writer.takeOutput(), to: file))

        let rows = try Tshark.fields(file, ["harbor.id", "harbor.size", "harbor.bootstrap.name", "harbor.coding.tag",
                                            "harbor.text"])
        #expect(rows.count == records.count)
        #expect(rows.first == ["\(0x4842_0001)", "16", "com.example.echo", "", ""])
        #expect(rows.count > 2 && rows[1] == ["\(0x5850_4304)", "4", "", "0x0a", ""])
        #expect(rows.count > 2 && rows[2] == ["3", "10", "", "", "plain text"])
        for (row, record) in zip(rows, records) {
            #expect(row.first == "\(record.id)" && row.dropFirst().first == "\(UInt32(clamping: record.bodySize))")
        }
        let detail = try Tshark.run(["-r", file, "-V"])
        #expect(!detail.contains("Malformed") && !detail.contains("Lua Error"), "\(detail.suffix(2000))")
    }
}
