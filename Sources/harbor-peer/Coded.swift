// Harbor — harbor-peer's `coded` command: a Codable message with rights as fields (C03).
import Glibc
import Harbor
import HarborCoding
import HarborPeerCommands

/// What the test sends: every kind of right and a region as Codable fields.
/// (The test declares the same shape; the body names fields, not types.)
struct CodedDelivery: Codable {
    var note: String
    var reportTo: SendRight
    var inbox: ReceiveRightCarrier
    var answer: SendOnceRightCarrier
    var payload: MemoryRegion
}

/// What the peer answers through `answer`.
struct CodedReport: Codable {
    var pid: Int32
    var note: String
    var received: [String]
    var regionCount: Int
    var regionSum: UInt32
}

/// Decodes the delivery, uses each right (receives two messages on the
/// moved receive right, sends ``PeerCommand/used`` on the send right, sums
/// the region) and answers through the send-once right, itself a Codable
/// message.
func serveCoded(_ message: inout Message) throws {
    let delivery = try MessageDecoder().decode(CodedDelivery.self, from: &message)
    let inbox = try delivery.inbox.take()
    var received: [String] = []
    for _ in 0..<2 {
        received.append(try inbox.receive(timeout: .seconds(10)).text)
    }
    try delivery.reportTo.send(Message(id: PeerCommand.used, text: "used by \(getpid())"))
    let sum = delivery.payload.withUnsafeBytes { $0.reduce(UInt32(0)) { $0 &+ UInt32($1) } }
    let report = CodedReport(pid: getpid(), note: delivery.note, received: received,
                             regionCount: delivery.payload.count, regionSum: sum)
    try delivery.answer.take().send(MessageEncoder().encode(report, id: PeerCommand.coded))
}
