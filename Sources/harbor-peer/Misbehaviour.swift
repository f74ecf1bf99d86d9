// Harbor — harbor-peer's misbehaviour, on request, for the P12 tests: what a
// sender can do with what an honest one holds. Raw packets on the connection
// of a send right it was given (Docs/WireFormat.md), writes into the slot
// counter that right maps, and honest-looking messages that are merely
// large. The tests run it as another uid and check that only it suffers.
import Glibc
import Harbor
import HarborPeerCommands
import HarborSystem
import SystemPackage

enum Misbehaviour {
    /// Runs the misbehaviour `id` names, with `text` as its argument and
    /// `target` (right 0 of the request, or home) as its victim; a line
    /// saying what was done, for the reply.
    static func run(_ id: Int32, _ text: String, target: SendRight) -> String {
        let words = text.split(separator: " ").map { Int($0) ?? 0 }
        let first = words.first ?? 0, second = words.count > 1 ? words[1] : 0
        guard let route = target.token.port.remoteRoute else { return "no connection" }
        switch id {
        case PeerCommand.rawFlood: return "sent=\(flood(route, count: first))"
        case PeerCommand.rawWaits: return "sent=\(waits(route, count: first))"
        case PeerCommand.rawFragment: return "sent=\(unfinished(route, declared: first, sending: second))"
        case PeerCommand.scribble: return scribble(route, how: text)
        case PeerCommand.regions: return "sent=\(regions(target, count: first, bytes: second))"
        case PeerCommand.rights: return "sent=\(rights(target, messages: first, copies: second))"
        case PeerCommand.payload: return "sent=\(payload(target, bytes: first))"
        case PeerCommand.files: return "sent=\(files(target, messages: first, files: second))"
        default: return "unknown"
        }
    }

    /// `count` counted messages without taking a slot for any.
    private static func flood(_ route: RemoteRoute, count: Int) -> Int {
        var sent = 0
        for index in 0..<count where send(route, header(kind: 1, flags: 1, id: Int32(index), body: 4) + [1, 2, 3, 4]) {
            sent += 1
        }
        return sent
    }

    /// `count` wait packets, each carrying a fresh eventfd (closed here once
    /// sent: the receiver holds whatever it keeps).
    private static func waits(_ route: RemoteRoute, count: Int) -> Int {
        var sent = 0
        for _ in 0..<count {
            guard let eventfd = try? SharedDescriptor.makeEventDescriptor() else { break }
            var packet = header(kind: 2, flags: 0, id: 0, body: 0)
            packet[14] = 1  // one descriptor
            if send(route, packet, descriptors: [eventfd.rawValue]) { sent += 1 }
        }
        return sent
    }

    /// A fragmented message declaring one copied region of `declared` bytes,
    /// of which `sending` are sent; the rest never comes.
    private static func unfinished(_ route: RemoteRoute, declared: Int, sending: Int) -> Int {
        var first = header(kind: 1, flags: 1 | 8, id: 7, body: 0, entries: 1)
        var entry = [UInt8](repeating: 0, count: 32)
        entry[0] = 6  // copied region
        withUnsafeBytes(of: UInt64(declared).littleEndian) { entry.replaceSubrange(8..<16, with: $0) }
        first += entry
        guard send(route, first) else { return 0 }
        let chunk = [UInt8](repeating: 0xA5, count: 96 * 1024 - 24)
        var sent = 0
        while sent < sending {
            let count = min(chunk.count, sending - sent)
            guard send(route, header(kind: 3, flags: 0, id: 0, body: count) + chunk[0..<count]) else { break }
            sent += count
        }
        return sent
    }

    /// Writes the slot counter this right maps: `full` (slots taken far
    /// past those given back), `full-loop` (the same, again and again),
    /// `hoard` (every free slot taken, as a sender
    /// takes one, and kept), `room` (given back far past taken), `magic`
    /// (the whole page overwritten).
    private static func scribble(_ route: RemoteRoute, how: String) -> String {
        guard let slots = route.slots,
              let memory = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, slots.descriptor.rawValue, 0),
              memory != MAP_FAILED else { return "unmapped" }
        defer { munmap(memory, 4096) }
        let words = memory.assumingMemoryBound(to: Int32.self)
        switch how {
        case "full":
            words[16] = Int32.max / 2
            words[17] = 0
        case "full-loop":
            // A child process keeps writing "full" (every 50 µs) for as long
            // as this process lives, at most 30 s: a repair alone does not
            // last. Only stores and usleep in the child of a fork.
            let parent = getpid()
            if fork() == 0 {
                for _ in 0..<600_000 where getppid() == parent {
                    words[16] = Int32.max / 2
                    words[17] = 0
                    usleep(50)
                }
                _exit(0)
            }
        case "hoard":
            var taken = 0
            while taken < 100_000, slots.tryAcquire() { taken += 1 }
            return "taken=\(taken)"
        case "room":
            words[16] = 0
            words[17] = Int32.max / 2
            words[32] = Int32.max / 2
        default:
            memset(memory, 0xFF, 4096)
        }
        return "written"
    }

    /// `count` messages, each with one sealed memfd region of `bytes`
    /// (sparse: it costs nobody memory), sent as an honest sender sends.
    private static func regions(_ target: SendRight, count: Int, bytes: Int) -> Int {
        var sent = 0
        for index in 0..<count {
            guard let file = try? MemoryFile.create(name: "peer-region"),
                  (try? MemoryFile.setSize(file.rawValue, bytes)) != nil,
                  (try? MemoryFile.addSeals(file.rawValue, MappedRegion.requiredSeals)) != nil,
                  let region = try? MappedRegion(sealed: file, limit: .max) else { break }
            var content = MessageContent(id: Int32(index), body: Array("region \(index)".utf8))
            content.regions.append(region)
            if (try? target.token.port.enqueue(content, deadline: WaitDeadline(timeout: .seconds(10)))) != nil { sent += 1 }
        }
        return sent
    }

    /// `messages` messages, each carrying `files` descriptors: the write
    /// end of one pipe of this process, attached again and again.
    private static func files(_ target: SendRight, messages: Int, files: Int) -> Int {
        var ends: [CInt] = [-1, -1]
        guard pipe(&ends) == 0 else { return 0 }
        defer { close(ends[0]); close(ends[1]) }
        var sent = 0
        for index in 0..<messages {
            var message = Message(id: Int32(index), text: "files \(index)")
            for _ in 0..<files { try? message.attach(FileDescriptor(rawValue: ends[1])) }
            if (try? target.send(message, timeout: .seconds(10))) != nil { sent += 1 }
        }
        return sent
    }

    /// `messages` messages, each carrying `copies` send rights to one port
    /// of this process.
    private static func rights(_ target: SendRight, messages: Int, copies: Int) -> Int {
        let own = ReceiveRight()
        var sent = 0
        for index in 0..<messages {
            var message = Message(id: Int32(index), text: "rights \(index)")
            for _ in 0..<copies { message.attach(own.makeSendRight()) }
            if (try? target.send(message, timeout: .seconds(10))) != nil { sent += 1 }
        }
        return sent
    }

    /// One honest `Message(id:payload:)` of `bytes` bytes (a fragmented
    /// message past the inline limit); 1 when sent.
    private static func payload(_ target: SendRight, bytes: Int) -> Int {
        guard let message = try? Message(id: PeerCommand.payload, payloadCount: bytes, initializingWith: { buffer in
            for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index &* 31) }
        }) else { return 0 }
        return (try? target.send(message, timeout: .seconds(30))) != nil ? 1 : 0
    }

    /// A 24-byte header (Docs/WireFormat.md).
    private static func header(kind: UInt8, flags: UInt16, id: Int32, body: Int, entries: UInt16 = 0) -> [UInt8] {
        var writer = ByteWriter(capacity: 24)
        writer.append(WireFormat.version)
        writer.append(kind)
        writer.append(flags)
        writer.append(id)
        writer.append(UInt32(body))
        writer.append(entries)
        writer.append(UInt16(0))
        writer.append(UInt32(0))
        writer.append(UInt32(24 + Int(entries) * 32 + body))
        return writer.bytes
    }

    /// One packet on the route's socket, waiting up to ten seconds for room.
    private static func send(_ route: RemoteRoute, _ bytes: [UInt8], descriptors: [CInt] = []) -> Bool {
        for _ in 0..<10_000 {
            let sent = bytes.withUnsafeBytes { raw in
                try? SeqPacketSocket.send(route.socket.rawValue, parts: [raw], descriptors: descriptors)
            }
            switch sent {
            case true?: return true
            case false?: usleep(1000)  // the socket is full: the receiver is not reading
            case nil: return false     // gone
            }
        }
        return false
    }
}
