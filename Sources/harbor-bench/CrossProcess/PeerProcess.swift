// Harbor — the peer process of the cross-process benchmarks: serves each job's other side on its main thread.
import CHarborLinux
import CSystemd
import Glibc
import Harbor

/// Entry point of `harbor-bench __cross-process-peer <control> <ping> <bulk> <stream> <sdbus> <pingCred>`.
func runCrossProcessPeer(_ arguments: [String]) -> Never {
    let fds = arguments.compactMap { CInt($0) }
    guard fds.count == 6 else { abortBenchmark("peer: expected 6 descriptors, got \(arguments)") }
    do {
        let peer = try PeerProcess(control: fds[0], ping: fds[1], bulk: fds[2], stream: fds[3], sdbus: fds[4],
                                   pingCred: fds[5])
        peer.serve()
    } catch {
        abortBenchmark("peer: \(error)")
    }
    exit(0)
}

final class PeerProcess {
    let control, ping, pingSet, bulk, stream, pingCred, pingCredSet: CInt
    let home: SendRight
    let port = ReceiveRight()
    let sdbus: SDBusServer
    /// `interface-call`'s listener and actor, once asked for.
    var interfaces: InterfacePeer?
    /// One receive buffer, as large as the largest packet any job sends.
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 64)
    static let bufferSize = 1 << 20

    init(control: CInt, ping: CInt, bulk: CInt, stream: CInt, sdbus: CInt, pingCred: CInt) throws {
        (self.control, self.ping, self.bulk, self.stream) = (control, ping, bulk, stream)
        pingSet = try Raw.epoll(watching: ping)
        self.pingCred = pingCred
        pingCredSet = try Raw.epoll(watching: pingCred)
        var first = try Message.receiveInitial(timeout: .seconds(30))
        home = try first.takeSendRight(at: 0)
        // Room for a throughput batch without the sender waiting for slots
        // (the raw floor has the socket buffer for that).
        try port.setQueueLimit(1024)
        var hello = Message(id: 100)
        hello.attach(port.makeSendRight())
        try home.send(hello)
        self.sdbus = try SDBusServer(fd: sdbus)
    }

    func serve() {
        while true {
            var command: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            let count = withUnsafeMutableBytes(of: &command) { read(control, $0.baseAddress, $0.count) }
            guard count == 32, let job = PeerJob(rawValue: command.0) else { return }
            if job == .exit { return }
            do {
                try run(job, count: Int(command.1), size: Int(command.2), extra: Int(command.3))
            } catch {
                abortBenchmark("peer job \(job): \(error)")
            }
            var done: UInt8 = 1
            _ = write(control, &done, 1)
        }
    }

    private func run(_ job: PeerJob, count: Int, size: Int, extra: Int) throws {
        switch job {
        case .floorPingPong:
            for _ in 0..<count {
                Raw.waitReady(pingSet)
                let received = recv(ping, buffer, Self.bufferSize, 0)
                _ = send(ping, buffer, received, Int32(charbor_MSG_NOSIGNAL))
            }
        case .floorPassCred:
            let control = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)
            defer { control.deallocate() }
            for _ in 0..<count {
                Raw.waitReady(pingCredSet)
                let received = Raw.receiveWithCredentials(pingCred, buffer, Self.bufferSize, control: control)
                _ = send(pingCred, buffer, received, Int32(charbor_MSG_NOSIGNAL))
            }
        case .harborEcho:
            for _ in 0..<count {
                let request = try port.receive()
                try home.send(Message(id: 2, body: request.body))
            }
        case .sdbusEcho:
            try sdbus.serve(calls: count)
        case .floorStream:
            // `count` batches of `extra` packets; an acknowledgement after each batch.
            for _ in 0..<count {
                for _ in 0..<extra { _ = recv(bulk, buffer, Self.bufferSize, 0) }
                var ack: UInt8 = 1
                _ = send(bulk, &ack, 1, Int32(charbor_MSG_NOSIGNAL))
            }
        case .harborStream:
            for _ in 0..<count {
                for _ in 0..<extra { _ = try port.receive() }
                try home.send(Message(id: 3))
            }
        case .floorRights:
            for _ in 0..<count {
                Raw.waitReady(pingSet)
                let (received, right) = Raw.receiveWithDescriptor(ping, buffer, Self.bufferSize)
                guard right >= 0 else { throw BenchmarkFailure("no descriptor arrived") }
                _ = send(right, buffer, received, Int32(charbor_MSG_NOSIGNAL))
                close(right)
            }
        case .harborSendOnce:
            for _ in 0..<count {
                var request = try port.receive()
                let body = request.body
                try request.reply(Message(id: 2, body: body))
            }
        case .harborSendRight:
            for _ in 0..<count {
                var request = try port.receive()
                _ = try request.takeSendRight(at: 0)
                try home.send(Message(id: 2, body: request.body))
            }
        case .chunks:
            // The whole payload lands in one buffer, then is summed: what a
            // message's receiver has. Allocated and touched once per job.
            let whole = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
            defer { whole.deallocate() }
            memset(whole, 0, size)
            for _ in 0..<count {
                var received = 0
                while received < size {
                    let got = read(stream, whole + received, size - received)
                    guard got > 0 else { throw BenchmarkFailure("stream read: errno \(charbor_errno())") }
                    received += got
                }
                var sum = payloadChecksum(UnsafeRawBufferPointer(start: whole, count: size))
                Raw.writeAll(stream, &sum, 8)
            }
        case .chunksStreaming:
            for _ in 0..<count {
                var sum: UInt64 = 0
                var remaining = size
                var carry = 0  // bytes of an incomplete word kept at the front of the buffer
                while remaining > 0 {
                    let got = read(stream, buffer + carry, min(Self.bufferSize - carry, remaining))
                    guard got > 0 else { throw BenchmarkFailure("stream read: errno \(charbor_errno())") }
                    remaining -= got
                    let have = carry + got
                    let whole = have & ~7
                    sum &+= payloadChecksum(UnsafeRawBufferPointer(start: buffer, count: whole))
                    carry = have - whole
                    if carry > 0 { buffer.copyMemory(from: buffer + whole, byteCount: carry) }
                }
                Raw.writeAll(stream, &sum, 8)
            }
        case .rawMemfd:
            for _ in 0..<count {
                Raw.waitReady(pingSet)
                let (_, file) = Raw.receiveWithDescriptor(ping, buffer, Self.bufferSize)
                guard file >= 0 else { throw BenchmarkFailure("no memfd arrived") }
                var info = stat()
                fstat(file, &info)
                let length = Int(info.st_size)
                let seals = fcntl(file, charbor_F_GET_SEALS)
                guard seals & charbor_F_SEAL_WRITE != 0, let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, file, 0),
                      mapping != MAP_FAILED else { throw BenchmarkFailure("memfd not sealed or not mappable") }
                var sum = payloadChecksum(UnsafeRawBufferPointer(start: mapping, count: length))
                munmap(mapping, length)
                close(file)
                _ = send(ping, &sum, 8, Int32(charbor_MSG_NOSIGNAL))
            }
        case .harborPayload:
            for _ in 0..<count {
                let message = try port.receive()
                var sum: UInt64
                if let region = message.regions.first {
                    sum = region.withUnsafeBytes { payloadChecksum($0) }
                } else {
                    sum = message.body.withUnsafeBytes { payloadChecksum($0) }
                }
                try home.send(Message(id: 3, body: withUnsafeBytes(of: &sum) { Array($0) }))
            }
        case .startInterfaces:
            let path = try port.receive().text
            interfaces = try InterfacePeer(socketPath: path)
        case .exit:
            return
        }
    }
}
