// Harbor — grpc-peer: a grpc-swift 2 unary echo over a Unix-domain socket, for harbor-bench.
//
//   grpc-peer serve PATH    serve `bench.Echo/Echo` on PATH; prints "ready" when listening,
//                           exits when its standard input closes
//   grpc-peer client PATH   reads commands on standard input: two UInt64 (calls, bytes);
//                           makes that many unary calls of `bytes`-byte requests, timing
//                           each (CLOCK_MONOTONIC), and writes the calls' nanoseconds
//                           (Int64 each) and then the process's CPU nanoseconds spent
//                           (one Int64) to standard output; calls = 0 ends it.
//
// Messages are raw bytes, serialised by hand (no protobuf): the request comes
// back as the response, as in harbor-bench's other echoes.
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Foundation
import Glibc

/// The echo method's descriptor.
let echoMethod = MethodDescriptor(fullyQualifiedService: "bench.Echo", method: "Echo")

/// Raw bytes as a gRPC message: no framing of its own.
struct RawSerializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
}

/// Raw bytes back from a gRPC message.
struct RawDeserializer: MessageDeserializer {
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
        serializedMessageBytes.withUnsafeBytes { Array($0) }
    }
}

/// The server's one method: the request's bytes are the response.
struct EchoService: RegistrableRPCService {
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(forMethod: echoMethod, deserializer: RawDeserializer(), serializer: RawSerializer()) {
            request, _ in
            let single = try await ServerRequest(stream: request)
            return StreamingServerResponse(single: ServerResponse(message: single.message))
        }
    }
}

func nanoseconds(_ clock: clockid_t) -> Int64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

func readExactly(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Bool {
    var done = 0
    while done < count {
        let got = read(fd, buffer + done, count - done)
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { return false }
        done += got
    }
    return true
}

func writeAll(_ fd: CInt, _ buffer: UnsafeRawPointer, _ count: Int) {
    var done = 0
    while done < count {
        let put = write(fd, buffer + done, count - done)
        if put < 0 && errno == EINTR { continue }
        guard put > 0 else { exit(3) }
        done += put
    }
}

func fail(_ text: String) -> Never {
    let line = Array("grpc-peer: \(text)\n".utf8)
    line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

func serve(path: String) async throws {
    unlink(path)
    let server = GRPCServer(
        transport: .http2NIOPosix(address: .unixDomainSocket(path: path), transportSecurity: .plaintext),
        services: [EchoService()])
    try await withThrowingDiscardingTaskGroup { group in
        group.addTask { try await server.serve() }
        guard try await server.listeningAddress != nil else { fail("the server is not listening") }
        print("ready")
        fflush(nil)
        // Serve until the parent closes our standard input (or dies); the
        // blocking read waits on a thread of its own, not the task pool's.
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) > 0 {}
            server.beginGracefulShutdown()
        }
    }
}

func runClient(path: String) async throws {
    try await withGRPCClient(
        transport: .http2NIOPosix(target: .unixDomainSocket(path: path), transportSecurity: .plaintext)
    ) { client in
        var samples: [Int64] = []
        while true {
            var command: (UInt64, UInt64) = (0, 0)
            guard withUnsafeMutableBytes(of: &command, { readExactly(0, $0.baseAddress!, 16) }), command.0 > 0 else {
                break
            }
            let payload = [UInt8](repeating: 7, count: Int(command.1))
            samples.removeAll(keepingCapacity: true)
            let cpuBefore = nanoseconds(CLOCK_PROCESS_CPUTIME_ID)
            for _ in 0..<command.0 {
                let started = nanoseconds(CLOCK_MONOTONIC)
                let reply = try await client.unary(
                    request: ClientRequest(message: payload), descriptor: echoMethod,
                    serializer: RawSerializer(), deserializer: RawDeserializer(), options: .defaults
                ) { response in try response.message }
                samples.append(nanoseconds(CLOCK_MONOTONIC) - started)
                guard reply.count == payload.count else { fail("short reply") }
            }
            var cpu = nanoseconds(CLOCK_PROCESS_CPUTIME_ID) - cpuBefore
            samples.withUnsafeBytes { writeAll(1, $0.baseAddress!, $0.count) }
            writeAll(1, &cpu, 8)
        }
        client.beginGracefulShutdown()
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: grpc-peer serve|client PATH") }
switch arguments[1] {
case "serve": try await serve(path: arguments[2])
case "client": try await runClient(path: arguments[2])
default: fail("usage: grpc-peer serve|client PATH")
}
