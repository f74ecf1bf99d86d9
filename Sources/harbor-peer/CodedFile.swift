// Harbor — harbor-peer's `codedFile` command: a send right, a receive right
// and a file descriptor as Codable fields (C07).
import Glibc
import Harbor
import HarborCoding
import HarborPeerCommands
import SystemPackage

/// What the C07 test sends: a send right, a receive right and a file
/// descriptor as Codable fields, and a send-once right to answer on.
struct CodedFileDelivery: Codable {
    var note: String
    var reportTo: SendRight
    var inbox: ReceiveRightCarrier
    var output: FileDescriptorCarrier
    var answer: SendOnceRightCarrier

    /// What the peer answers.
    struct Report: Codable {
        var pid: Int32
        var received: [String]
    }
}

/// Decodes the delivery and uses each field: writes "written by <pid>"
/// to the file (the test reads it back from its pipe), receives one
/// message on the moved receive right, sends ``PeerCommand/used`` on the
/// send right, and answers through the send-once right.
func serveCodedFile(_ message: inout Message) throws {
    let delivery = try MessageDecoder().decode(CodedFileDelivery.self, from: &message)
    let output = try delivery.output.take()
    defer { try? output.close() }
    _ = try output.writeAll(Array("written by \(getpid())".utf8))
    let inbox = try delivery.inbox.take()
    let received = try inbox.receive(timeout: .seconds(10)).text
    try delivery.reportTo.send(Message(id: PeerCommand.used, text: "used by \(getpid())"))
    let report = CodedFileDelivery.Report(pid: getpid(), received: [received])
    try delivery.answer.take().send(MessageEncoder().encode(report, id: PeerCommand.codedFile))
}

/// Takes the receive right at 0 and writes each queued message's text to
/// every file it carries (moved in its queue); the number of files written.
func drainFiles(_ message: inout Message) throws -> Int {
    let moved = try message.takeReceiveRight(at: 0)
    var written = 0
    while var queued = moved.tryReceive() {
        for index in 0..<queued.carriedFileCount {
            let file = try queued.takeFileDescriptor(at: index)
            defer { try? file.close() }
            _ = try file.writeAll(Array(queued.text.utf8))
            written += 1
        }
    }
    return written
}
