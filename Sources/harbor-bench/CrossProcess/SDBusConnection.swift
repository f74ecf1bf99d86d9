// Harbor — sd-bus over a socket pair: the IPC a Linux daemon author would otherwise pick, both ends.
import CSystemd
import Glibc

/// The peer's end: a direct (no broker) sd-bus server on one end of a socket
/// pair. Every method call under `/bench` is answered with its own byte
/// array (`ay`), like Harbor's echo.
final class SDBusServer {
    private var bus: OpaquePointer?
    private var slot: OpaquePointer?
    fileprivate var served = 0

    init(fd: CInt) throws {
        guard sd_bus_new(&bus) >= 0 else { throw BenchmarkFailure("sd_bus_new failed") }
        var id = sd_id128_t()
        _ = sd_id128_randomize(&id)
        guard sd_bus_set_fd(bus, fd, fd) >= 0, sd_bus_set_server(bus, 1, id) >= 0, sd_bus_start(bus) >= 0 else {
            throw BenchmarkFailure("sd-bus server setup failed")
        }
        let handler: sd_bus_message_handler_t = { message, userdata, _ in
            let server = Unmanaged<SDBusServer>.fromOpaque(userdata!).takeUnretainedValue()
            var data: UnsafeRawPointer?
            var size = 0
            guard sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &data, &size) >= 0 else { return -EINVAL }
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &reply) >= 0 else { return -ENOMEM }
            defer { sd_bus_message_unref(reply) }
            guard sd_bus_message_append_array(reply, CChar(UInt8(ascii: "y")), data, size) >= 0,
                  sd_bus_send(nil, reply, nil) >= 0 else { return -EIO }
            server.served += 1
            return 1
        }
        guard sd_bus_add_object(bus, &slot, "/bench", handler, Unmanaged.passUnretained(self).toOpaque()) >= 0 else {
            throw BenchmarkFailure("sd_bus_add_object failed")
        }
    }

    /// Processes messages until `calls` method calls have been answered.
    func serve(calls: Int) throws {
        served = 0
        while served < calls {
            let processed = sd_bus_process(bus, nil)
            if processed < 0 { throw BenchmarkFailure("sd_bus_process: \(processed)") }
            if processed == 0 { _ = sd_bus_wait(bus, UInt64.max) }
        }
    }

    deinit {
        sd_bus_slot_unref(slot)
        // No flush: with `--only` leaving sd-bus out, the client never
        // connected, and a flush would wait for it forever.
        sd_bus_close_unref(bus)
    }
}

/// The parent's end: a direct sd-bus client; one blocking method call
/// (`sd_bus_call`) per round trip, carrying the payload as `ay`.
final class SDBusClient {
    private var bus: OpaquePointer?

    init(fd: CInt) throws {
        guard sd_bus_new(&bus) >= 0, sd_bus_set_fd(bus, fd, fd) >= 0, sd_bus_start(bus) >= 0 else {
            throw BenchmarkFailure("sd-bus client setup failed")
        }
    }

    /// Calls `org.harbor.Bench.Echo` with `payload`; returns the reply's length.
    func call(_ payload: UnsafeRawBufferPointer) throws -> Int {
        var request: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &request, nil, "/bench", "org.harbor.Bench", "Echo") >= 0 else {
            throw BenchmarkFailure("sd_bus_message_new_method_call failed")
        }
        defer { sd_bus_message_unref(request) }
        guard sd_bus_message_append_array(request, CChar(UInt8(ascii: "y")), payload.baseAddress, payload.count) >= 0 else {
            throw BenchmarkFailure("sd_bus_message_append_array failed")
        }
        var error = sd_bus_error()
        var reply: OpaquePointer?
        let result = sd_bus_call(bus, request, 0, &error, &reply)
        defer { sd_bus_message_unref(reply); sd_bus_error_free(&error) }
        guard result >= 0 else { throw BenchmarkFailure("sd_bus_call: \(result)") }
        var data: UnsafeRawPointer?
        var size = 0
        guard sd_bus_message_read_array(reply, CChar(UInt8(ascii: "y")), &data, &size) >= 0 else {
            throw BenchmarkFailure("reading the reply failed")
        }
        return size
    }

    deinit { sd_bus_flush_close_unref(bus) }
}
