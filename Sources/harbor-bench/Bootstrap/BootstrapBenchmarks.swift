// Harbor — benchmarks through harbord: look-up latency (cold, cached) and request/reply found by name.
import Harbor
import HarborBootstrap

/// Look-up latency through a real `harbord` process.
struct BootstrapLookUp: Benchmark {
    let name = "bootstrap-lookup"
    let summary = "look a name up through harbord: new connection (cold) and open connection (cached)"
    let unit = "look-up"
    let iterations = (full: 200, quick: 50)
    let notes = [
        "floor: a 16-byte request and its echo over a SEQPACKET socket pair to another process (cat).",
        "floor-fds: the raw minimum of a look-up: a 16-byte request, and a reply carrying two descriptors"
            + " (SCM_RIGHTS, what a send right is) that the asker closes, to another process (harbor-bench itself).",
        "floor-shape: a look-up's system calls with no Harbor code: a 42-byte request; the answerer sleeps in an epoll set"
            + " nested in another, asks the inner set, receives, answers with 56 bytes and two descriptors; the asker waits in"
            + " epoll_pwait2 (5 s timeout), receives, closes both; SO_PASSCRED on both ends (lookup-cached against it: Harbor's own work).",
        "lookup-cold: connect to harbord's socket, receive the bootstrap right, look the name up (a new process's first look-up).",
        "lookup-cached: look the name up again on an open connection: one request and one reply carrying a send right,"
            + " dropped at once (so each reply's right is a port new to this process).",
        "lookup-held: the same while this process holds a right from the look-up before: the reply's right is a port"
            + " it knows (what a client's repeated look-ups of one name cost).",
        "harbord and the echo service are separate processes (built beside harbor-bench).",
    ]

    /// The look-ups are also measured against the raw minimum of a reply that carries descriptors.
    var reference: String? { "floor-fds" }

    func makeVariants() throws -> [any BenchmarkVariant] {
        let fixture = try BootstrapFixture()
        return [ProcessEchoFloor(), DescriptorReplyFloor(), LookUpShapeFloor(), LookUpVariant(fixture, .cold),
                LookUpVariant(fixture, .cached), LookUpVariant(fixture, .held)]
    }
}

/// A request and its reply to a service in another process: found by name
/// each time, or with the right already in hand.
struct BootstrapRequestReply: Benchmark {
    let name = "bootstrap-request-reply"
    let summary = "request + reply to a service in another process, found by name vs right in hand"
    let unit = "round trip"
    let iterations = (full: 500, quick: 100)
    let notes = [
        "floor: a 16-byte request and its echo over a SEQPACKET socket pair to another process (cat).",
        "by-name: look the service up through harbord (open connection), then request + reply with a send-once reply right.",
        "right-in-hand: the same request + reply with the send right looked up once: harbord is not involved.",
        "The service is `harbor watch bench.echo --quiet` (answers pings); the client is this process.",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let fixture = try BootstrapFixture()
        return [ProcessEchoFloor(), RequestReplyVariant(fixture, byName: true), RequestReplyVariant(fixture, byName: false)]
    }
}

final class LookUpVariant: BenchmarkVariant {
    /// What the client has before each look-up.
    enum Kind {
        /// Nothing: it connects first.
        case cold
        /// An open connection; each right looked up is dropped at once.
        case cached
        /// An open connection and the right from the look-up before.
        case held
    }

    let name: String
    let label: String
    private let fixture: BootstrapFixture
    private let kind: Kind
    private var client: BootstrapClient?
    private var held: SendRight?

    init(_ fixture: BootstrapFixture, _ kind: Kind) {
        self.fixture = fixture
        self.kind = kind
        switch kind {
        case .cold:
            name = "lookup-cold"
            label = "connect + bootstrap right + look-up"
        case .cached:
            name = "lookup-cached"
            label = "look-up on an open connection"
        case .held:
            name = "lookup-held"
            label = "look-up of a name whose right is held"
        }
    }

    func start() throws {
        do { client = try BootstrapClient(socketPath: fixture.socketPath) } catch { throw BenchmarkFailure("\(error)") }
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        // The held right lives only through this variant's own rounds: the
        // other variants, run in between, must find the port unknown here.
        defer { held = nil }
        if kind == .held {
            do { held = try client?.lookUp(BootstrapFixture.serviceName) } catch { throw BenchmarkFailure("look-up: \(error)") }
        }
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            do {
                let client = kind == .cold ? try BootstrapClient(socketPath: fixture.socketPath) : self.client!
                let right = try client.lookUp(BootstrapFixture.serviceName)
                if kind == .held { held = right }
            } catch {
                throw BenchmarkFailure("look-up: \(error)")
            }
        }
    }

    func stop() {
        held = nil
        client = nil
    }
}

final class RequestReplyVariant: BenchmarkVariant {
    let name: String
    let label: String
    private let fixture: BootstrapFixture
    private let byName: Bool
    private var client: BootstrapClient?
    private var service: SendRight?
    private let replies = ReceiveRight()

    init(_ fixture: BootstrapFixture, byName: Bool) {
        self.fixture = fixture
        self.byName = byName
        name = byName ? "by-name" : "right-in-hand"
        label = byName ? "look-up + request + reply" : "request + reply, right kept"
    }

    func start() throws {
        do {
            let client = try BootstrapClient(socketPath: fixture.socketPath)
            self.client = client
            service = try client.lookUp(BootstrapFixture.serviceName)
        } catch {
            throw BenchmarkFailure("\(error)")
        }
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let client, let kept = service else { throw BenchmarkFailure("not started") }
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            do {
                let target = byName ? try client.lookUp(BootstrapFixture.serviceName) : kept
                var request = Message(id: bootstrapPingID)
                request.setReplyRight(replies.makeSendOnceRight())
                try target.send(request, timeout: .seconds(5))
                _ = try replies.receive(timeout: .seconds(5))
            } catch {
                throw BenchmarkFailure("request/reply: \(error)")
            }
        }
    }

    func stop() {
        service = nil
        client = nil
    }
}
