// Harbor — the Swift that Docs/Capture.md and HarborCapture's DocC catalog show,
// compiled (not run: the behaviour is O09's tests').
// snippet: capture-tap
import HarborPorts
// end snippet
// snippet: capture-pcapng
import HarborCapture
import HarborPorts
// end snippet

extension GuideSnippetSources {
    static func captureTap() throws {
        // snippet: capture-tap

        let inbox = ReceiveRight()
        let tap = try inbox.tap(bodyPrefix: 64, capacity: 4096)
        // … messages arrive …
        while let record = tap.next(timeout: .seconds(1)) {
            print(record.id, record.bodySize, record.sender.pid, record.queueDepth)
        }
        tap.cancel()          // or let the handle go: deinit cancels
        // end snippet
    }

    static func capturePcapng(output: ([UInt8]) -> Void) throws {
        // snippet: capture-pcapng

        let inbox = ReceiveRight()
        let tap = try inbox.tap(bodyPrefix: 64)
        var writer = PcapngWriter(port: inbox.name, description: "com.example.echo")
        var last: Int64 = 0
        while let record = tap.next(timeout: .seconds(1)) {
            writer.append(record)
            last = record.wallNanoseconds
            output(writer.takeOutput())      // to a file, or a pipe into Wireshark
        }
        writer.finish(admitted: tap.admitted, dropped: tap.dropped, wallNanoseconds: last)
        output(writer.takeOutput())
        // end snippet
    }
}
