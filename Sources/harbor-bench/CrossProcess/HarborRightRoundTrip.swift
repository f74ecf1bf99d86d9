// Harbor — Harbor's round trip whose request carries one right to another process.
import Harbor

final class HarborRightRoundTrip: BenchmarkVariant {
    let name: String
    let label: String
    private let sendOnce: Bool
    private let link: PeerLink
    private let payload = [UInt8](repeating: 7, count: 64)

    init(link: PeerLink, sendOnce: Bool) {
        self.link = link
        self.sendOnce = sendOnce
        name = sendOnce ? "harbor-sendonce" : "harbor-sendright"
        label = sendOnce ? "request carries a fresh send-once reply right; peer message.reply()"
            : "request carries a copy of a send right; reply through a fixed right"
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(sendOnce ? .harborSendOnce : .harborSendRight, count: warmUp + iterations)
        let replyRight = link.home.makeSendRight()
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            var request = Message(id: 1, body: payload)
            if sendOnce { request.setReplyRight(link.home.makeSendOnceRight()) } else { request.attach(replyRight) }
            try link.toPeer.send(request)
            _ = try link.home.receive()
        }
        try link.end()
    }

    func stop() {}
}
