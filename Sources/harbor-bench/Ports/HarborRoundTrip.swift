// Harbor — Harbor's request/reply between two threads, three idiomatic ways.
import Harbor

/// A client sends a request to the server's port and blocks in `receive()`
/// on its own port; the server blocks in `receive()` and answers.
final class HarborRoundTrip: BenchmarkVariant {
    enum Style: Sendable {
        /// Each request carries a fresh send-once reply right (Mach's
        /// MAKE_SEND_ONCE idiom); the server calls `message.reply(_:)`.
        case sendOnceReply
        /// Each request carries a copy of one send right made once.
        case sendRightReply
        /// No reply right: both sides hold a send right to the other, made once.
        case fixedRights
        /// `fixedRights` with a tap armed on both ports, read by the client
        /// after each round trip: what an armed capture costs.
        case tapped
    }

    /// The two ports, shared by the client (main thread) and the server thread.
    final class Ports: Sendable {
        let server = ReceiveRight()
        let client = ReceiveRight()
        let toServer: SendRight
        let toClient: SendRight
        let taps: [PortTap]
        init(tapped: Bool) throws {
            toServer = server.makeSendRight()
            toClient = client.makeSendRight()
            taps = tapped ? [try server.tap(bodyPrefix: 64), try client.tap(bodyPrefix: 64)] : []
        }
    }

    let name: String
    let label: String
    private let style: Style
    private let server: SharedServerThread
    private var ports: Ports?

    init(_ style: Style, server: SharedServerThread) {
        self.style = style
        self.server = server
        switch style {
        case .sendOnceReply:
            name = "harbor"
            label = "request carries a send-once reply right; server message.reply()"
        case .sendRightReply:
            name = "harbor-sendright"
            label = "request carries a copy of one send right as reply right"
        case .fixedRights:
            name = "harbor-norights"
            label = "no reply right: each side holds a send right to the other"
        case .tapped:
            name = "harbor-tapped"
            label = "harbor-norights with both ports tapped, the records read each trip"
        }
    }

    func start() throws {
        ports = try Ports(tapped: style == .tapped)
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let ports else { throw BenchmarkFailure("measure before start") }
        let style = self.style
        server.thread.start {
            while true {
                var request: Message
                do { request = try ports.server.receive() } catch {
                    abortBenchmark("server receive failed: \(error)")
                }
                if request.id == 0 { return }
                do {
                    if style == .fixedRights || style == .tapped {
                        try ports.toClient.send(Message(id: 2))
                    } else {
                        try request.reply(Message(id: 2))
                    }
                } catch {
                    abortBenchmark("server reply failed: \(error)")
                }
            }
        }
        let replyRight = ports.toClient
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            var request = Message(id: 1)
            switch style {
            case .sendOnceReply: request.setReplyRight(ports.client.makeSendOnceRight())
            case .sendRightReply: request.setReplyRight(replyRight)
            case .fixedRights, .tapped: break
            }
            try ports.toServer.send(request)
            let reply = try ports.client.receive()
            guard reply.id == 2 else { throw BenchmarkFailure("unexpected reply id \(reply.id)") }
            for tap in ports.taps { _ = tap.records(timeout: .zero) }
        }
        try ports.toServer.send(Message(id: 0))
        server.thread.waitUntilIdle()
    }

    func stop() {
        ports = nil
    }
}
