// Harbor fuzzing — the descriptors a hostile peer can pass.
//
// Real objects of every kind the receiver checks for, right and wrong:
// memfds sealed every way (or not), sockets of each type, a socket whose
// peer is gone, eventfds, pipes, epoll sets, real and forged slot
// counters, connections to the receiver itself. Everything made for one
// input is held in `Holdings` and closed when the input ends.
import CHarborLinux
import Glibc
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

/// What one input made and must let go of at its end.
final class Holdings {
    var descriptors: [SharedDescriptor] = []
    /// Ports of the peer's (receive rights' tokens), kept until the end.
    var ports: [ReceiveRightToken] = []
    var objects: [AnyObject] = []

    func keep(_ descriptor: SharedDescriptor) -> SharedDescriptor {
        descriptors.append(descriptor)
        return descriptor
    }

    /// A fresh port of the peer's, alive until the input ends.
    func freshPort() -> PortCore {
        let port = ReceiveRight()
        ports.append(port.token)
        return port.core
    }
}

enum Decoys {
    static let kinds = 19

    /// Memfd sizes worth trying: empty, tiny, a slot counter's, page edges.
    static let sizes = [0, 1, 24, 4095, SharedSlots.size, 4097, 65_536]

    /// Makes the descriptor `decoy` stands for (nil if the system refused).
    /// `receiver` is the port under test, for connections to it.
    static func make(_ decoy: Decoy, receiver: PortCore, holdings: Holdings) -> SharedDescriptor? {
        let size = sizes[Int(decoy.size) % sizes.count]
        let all = charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL
        let made: SharedDescriptor?
        switch Int(decoy.kind) % kinds {
        case 0: made = try? SharedDescriptor.makeEventDescriptor()
        case 1: made = memoryFile(size: size, seals: all, fill: decoy.size)
        case 2: made = memoryFile(size: size, seals: 0, fill: decoy.size)
        case 3: made = memoryFile(size: size, seals: all & ~charbor_F_SEAL_WRITE | charbor_F_SEAL_FUTURE_WRITE, fill: decoy.size)
        case 4: made = memoryFile(size: size, seals: all & ~charbor_F_SEAL_SHRINK, fill: decoy.size)
        case 5: made = memoryFile(size: size, seals: all & ~charbor_F_SEAL_GROW, fill: decoy.size)
        case 6: made = memoryFile(size: size, seals: all & ~charbor_F_SEAL_SEAL, fill: decoy.size)
        case 7, 8:
            guard let pair = try? SeqPacketSocket.makePair() else { return nil }
            if Int(decoy.kind) % kinds == 7 { holdings.descriptors.append(pair.1) }
            made = pair.0
        case 9: made = socketPair(Int32(SOCK_STREAM.rawValue), holdings)
        case 10: made = socketPair(Int32(SOCK_DGRAM.rawValue), holdings)
        case 11:
            var ends: [CInt] = [-1, -1]
            guard pipe(&ends) == 0 else { return nil }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            holdings.descriptors.append(SharedDescriptor(taking: ends[1]))
            made = SharedDescriptor(taking: ends[0])
        case 12: made = opened("/dev/null", O_RDWR)
        case 13:
            let fd = epoll_create1(CInt(EPOLL_CLOEXEC))
            made = fd >= 0 ? SharedDescriptor(taking: fd) : nil
        case 14:
            // A real slot counter, of a port the peer holds.
            made = (try? holdings.freshPort().ensureTransport())?.slots.descriptor
        case 15:
            // A connection to the receiver under test itself.
            made = try? receiver.ensureTransport().makeConnection(.send)
        case 16:
            made = try? holdings.freshPort().ensureTransport().makeConnection(.send)
        case 17:
            // Sealed, and larger than a memory-file packet may be (sparse).
            made = memoryFile(size: WireFormat.maximumMemoryFilePacket + 1, seals: all, fill: 0)
        default: made = opened("/", O_RDONLY | O_DIRECTORY)
        }
        return made.map(holdings.keep)
    }

    /// A memfd of `size` bytes (the first page filled with `fill`) with `seals`.
    static func memoryFile(size: Int, seals: CInt, fill: UInt8, contents: [UInt8] = []) -> SharedDescriptor? {
        guard let file = try? MemoryFile.create(name: "harbor-fuzz"),
              (try? MemoryFile.setSize(file.rawValue, size)) != nil else { return nil }
        var bytes = contents
        if bytes.isEmpty && fill != 0 && size > 0 { bytes = Packets.filled(min(size, 4096), with: fill) }
        if !bytes.isEmpty, (try? MemoryFile.writeAll(file.rawValue, [bytes])) == nil { return nil }
        if seals != 0, (try? MemoryFile.addSeals(file.rawValue, seals)) == nil { return nil }
        return file
    }

    private static func socketPair(_ type: Int32, _ holdings: Holdings) -> SharedDescriptor? {
        var ends: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, type | Int32(charbor_SOCK_CLOEXEC), 0, &ends) == 0 else { return nil }
        holdings.descriptors.append(SharedDescriptor(taking: ends[1]))
        return SharedDescriptor(taking: ends[0])
    }

    private static func opened(_ path: String, _ flags: CInt) -> SharedDescriptor? {
        let fd = open(path, flags | O_CLOEXEC)
        return fd >= 0 ? SharedDescriptor(taking: fd) : nil
    }
}

/// Open descriptors of this process, by number (for the leak check).
enum DescriptorTable {
    static func open() -> Set<CInt> {
        var numbers = Set<CInt>()
        guard let directory = opendir("/proc/self/fd") else { return numbers }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let number = CInt(name), number != own { numbers.insert(number) }
        }
        closedir(directory)
        return numbers
    }

    /// Fails the run if a descriptor is open that was not in `baseline`
    /// (the symbolizer's pipes excepted, and added to it).
    /// Threads that let go of their ports after the input (a bootstrap
    /// client's session thread, on its way out) get up to two seconds.
    static func expectNoneOpened(since baseline: inout Set<CInt>) {
        var open = open()
        var waited = 0
        while open.count > baseline.count && waited < 2000 {
            usleep(1000)
            waited += 1
            open = self.open()
        }
        guard open.count > baseline.count else { return }
        let new = open.subtracting(baseline)
        if areSymbolizerPipes(new) {
            baseline.formUnion(new)
            return
        }
        fail("descriptors left open after the input: \(new.sorted().map(describe).joined(separator: ", "))")
    }

    /// Whether `numbers` are the two pipes to the `llvm-symbolizer` child the
    /// sanitizer runtime starts the first time libFuzzer names a new
    /// function (they stay open for the rest of the run: not the input's).
    static func areSymbolizerPipes(_ numbers: Set<CInt>) -> Bool {
        guard numbers.count == 2, numbers.allSatisfy({ describe($0).contains("pipe:") }) else { return false }
        var children = ""
        if let file = fopen("/proc/self/task/\(getpid())/children", "r") {
            var buffer = [CChar](repeating: 0, count: 4096)
            while fgets(&buffer, CInt(buffer.count), file) != nil { children += text(buffer) }
            fclose(file)
        }
        return children.split(separator: " ").contains { pid in
            guard let file = fopen("/proc/\(pid.filter { $0.isNumber })/comm", "r") else { return false }
            defer { fclose(file) }
            var name = [CChar](repeating: 0, count: 64)
            return fgets(&name, 64, file) != nil && text(name).contains("symbolizer")
        }
    }

    private static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What descriptor `number` is, for a report.
    static func describe(_ number: CInt) -> String {
        var target = [CChar](repeating: 0, count: 256)
        let count = readlink("/proc/self/fd/\(number)", &target, target.count - 1)
        guard count > 0 else { return "\(number): ?" }
        return "\(number): " + String(decoding: target[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
