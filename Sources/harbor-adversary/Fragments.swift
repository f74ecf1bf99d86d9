// harbor-adversary — P12: fragmented messages that never finish, a flood
// of wait packets re-sending one eventfd, and a sender that dies half-way.
import Glibc
import HarborPeerCommands

enum Fragments {
    static let declared: UInt64 = 256 << 20

    /// Starts a fragmented message declaring `declared` bytes of copied
    /// region on `target`'s connection and sends `bytes` of it (data the
    /// receiver must commit: not zeros). Returns the bytes sent.
    static func start(on target: Target, declared: UInt64, sending bytes: Int) -> Int {
        var first = Packet(flags: Wire.Flag.counted | Wire.Flag.continued, id: Protocol.unknown)
        first.entries = [.copied(declared)]
        guard target.send(first, wait: .seconds(10)) == .sent else { return 0 }
        let chunk = [UInt8](repeating: 0xA5, count: Wire.maximumFragmentData)
        var sent = 0
        while sent < bytes {
            let count = min(chunk.count, bytes - sent)
            let header = Packet.fragmentHeader(count)
            let data = count == chunk.count ? chunk : Array(chunk[0..<count])
            guard RawIO.send(target.socket, [header, data], wait: .seconds(30)) == .sent else { break }
            sent += count
        }
        return sent
    }

    /// `fragments`: `--count` (3) connections, each with an unfinished
    /// message declaring 256 MiB and all but 1 MiB of it sent; holds on.
    static func unfinished(_ target: Target, _ options: Options, _ report: Report) {
        var connections = [target]
        for _ in 1..<max(1, options.count ?? 3) {
            guard let more = target.another(socketPath: options.socketPath, grantID: PeerCommand.grant) else { break }
            connections.append(more)
        }
        var total = 0
        for connection in connections {
            total += start(on: connection, declared: declared, sending: Int(declared) - (1 << 20))
        }
        report.set("connections", connections.count)
        report.set("bytesSent", total)
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }

    /// `die-mid-message`: half of a 256 MiB fragmented message, then SIGKILL.
    static func dieMidMessage(_ target: Target, _ options: Options, _ report: Report) {
        report.set("bytesSent", start(on: target, declared: declared, sending: Int(declared / 2)))
        report.set("killedItself", true)
        report.emit()
        kill(getpid(), SIGKILL)
    }

    /// `wait-flood`: takes every free slot (a sender registers a waiter only
    /// when the queue is full), sends `--count` (5,000) wait packets, every
    /// one carrying the same eventfd, gives the slots back, sends one
    /// request (so the victim frees a slot and wakes its waiters) and holds on.
    static func waitFlood(_ target: Target, _ options: Options, _ report: Report) {
        let hoarded = target.counter.takeAll()
        let eventfd = RawIO.eventDescriptor()
        var sent = 0
        for _ in 0..<(options.count ?? 5000) where RawIO.send(
            target.socket, [Packet.wait.encoded], descriptors: [eventfd], wait: .seconds(5)) == .sent {
            sent += 1
        }
        usleep(500_000)  // the victim reads them meanwhile
        target.counter.untake(hoarded)
        report.set("slotsTaken", hoarded)
        report.set("sent", sent)
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        options.holdOn()
    }
}
