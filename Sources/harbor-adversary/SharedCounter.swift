// harbor-adversary — P12: the port's slot counter, which every sender maps.
// Refused messages that keep their slot, a counter written "full" or
// "room" (in a loop), a counter with its magic overwritten, and every slot
// taken and kept.
import Glibc

enum SharedCounter {
    /// A counted packet the decoder refuses after reading its header: the
    /// `variant`th of a few shapes (a send right whose descriptors are
    /// eventfds, an unknown entry kind, a lying total length).
    static func refusedPacket(_ variant: Int) -> (Packet, [CInt]) {
        var packet = Packet(flags: Wire.Flag.counted, id: Protocol.unknown)
        switch variant % 3 {
        case 0:
            let first = RawIO.eventDescriptor(), second = RawIO.eventDescriptor()
            packet.entries = [.send(Identity.fresh(), first: 0)]
            packet.declaredDescriptors = 2
            return (packet, [first, second])
        case 1:
            packet.entries = [Entry(kind: 9, descriptorCount: 0, first: 0, identity: Identity.fresh())]
            return (packet, [])
        default:
            packet.body = Array("refused".utf8)
            packet.totalOverride = 99
            return (packet, [])
        }
    }

    /// `wedge`: `--count` (300) counted messages the decoder refuses, each
    /// on a slot taken as an honest sender takes it.
    static func wedge(_ target: Target, _ options: Options, _ report: Report) {
        var taken = 0, withoutSlot = 0
        for index in 0..<(options.count ?? 300) {
            let (packet, descriptors) = refusedPacket(index)
            if target.counter.acquire(patience: .milliseconds(20), socket: target.socket) {
                taken += 1
            } else {
                withoutSlot += 1
            }
            _ = RawIO.send(target.socket, [packet.encoded], descriptors: descriptors, wait: .seconds(5))
            for descriptor in descriptors { close(descriptor) }
        }
        usleep(300_000)  // the victim reads them meanwhile
        report.set("slotsTaken", taken)
        report.set("sentWithoutSlot", withoutSlot)
        report.set("counter", target.counter.isKnownLayout ? "known" : "unknown")
        report.set("freeAfter", target.counter.free.map { Int($0) } ?? -1)
        options.holdOn()
    }

    /// `scribble`: maps the counter writable and writes it full for every
    /// sender; `scribble-magic` overwrites the whole page. Then holds on.
    static func scribble(_ target: Target, _ options: Options, _ report: Report, everything: Bool) {
        report.set("counter", target.counter.isKnownLayout ? "known" : "unknown")
        report.set("writable", target.counter.isWritable)
        let written = everything ? target.counter.scribbleEverything() : target.counter.scribbleFull()
        report.set("written", written)
        report.set("freeAfter", target.counter.free.map { Int($0) } ?? -1)
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }

    /// `scribble-room`: a child process writes *room* into the counter
    /// every 50 µs for as long as this one lives (so honest senders believe
    /// there is room whatever the receiver repairs), while this one sends
    /// `--count` (2,000) counted messages of 8 KiB without taking a slot,
    /// each waiting at most 2 ms for room in its socket (16 MiB: more than
    /// a connection's buffer holds). Its own excess must cost only it:
    /// `stalled` says how many found its socket still full.
    static func scribbleRoom(_ target: Target, _ options: Options, _ report: Report) {
        report.set("counter", target.counter.isKnownLayout ? "known" : "unknown")
        report.set("written", target.counter.scribbleRoom())
        let parent = getpid()
        let counter = target.counter
        let writer = fork()
        if writer == 0 {
            // Only stores and usleep in the child of a fork.
            for _ in 0..<1_200_000 where getppid() == parent {
                _ = counter.scribbleRoom()
                usleep(50)
            }
            _exit(0)
        }
        var sent = 0, stalled = 0
        for index in 0..<(options.count ?? 2000) {
            var packet = Packet(flags: Wire.Flag.counted, id: Int32(index))
            packet.body = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 8192)
            switch RawIO.send(target.socket, [packet.encoded], wait: .milliseconds(2)) {
            case .sent: sent += 1
            case .full: stalled += 1
            default: break
            }
        }
        report.set("sent", sent)
        report.set("stalled", stalled)
        options.holdOn()
        if writer > 0 {
            kill(writer, SIGKILL)
            var status: CInt = 0
            waitpid(writer, &status, 0)
        }
    }

    /// `hoard-slots`: takes every free slot as a sender would, sends
    /// nothing, holds on, and leaves with them.
    static func hoardSlots(_ target: Target, _ options: Options, _ report: Report) {
        report.set("slotsTaken", target.counter.takeAll())
        report.set("freeAfter", target.counter.free.map { Int($0) } ?? -1)
        options.holdOn()
    }
}
