// Harbor — one message over a bare connection: how a process gets its first right.
import HarborSystem
import HarborPorts

/// Sends or receives exactly one Harbor message over a `SOCK_SEQPACKET`
/// socket that is not (yet) any port's connection: the descriptor a child
/// inherits (``ChildProcess``), or a connection accepted on / made to the
/// bootstrap server's listening socket (`HarborBootstrap`). The message is
/// encoded and decoded exactly as on any connection, so what arrives is
/// ordinary rights; no API turns a descriptor number into a right.
package enum FirstMessage {
    /// Sends `message` (with its rights) down `socket`. The message never
    /// counts against a queue limit. Does not wait for buffer room beyond
    /// `timeout` (nil waits).
    package static func send(
        _ message: consuming Message, over socket: SharedDescriptor, timeout: Duration? = nil
    ) throws(PortError) {
        var content = message.takeContent()
        try content.prepareForSending()
        content.countsAgainstLimit = false
        try RemoteRoute(socket: socket, slots: nil).send(content, deadline: WaitDeadline(timeout: timeout), to: nil)
    }

    /// Waits up to `timeout` (nil: for ever) for one message on `socket` and
    /// decodes it as hostile input. The socket must have `SO_PASSCRED` set
    /// (or its peer must), since every packet needs the kernel's credentials.
    /// - Throws: ``PortError/Code/timedOut``, ``PortError/Code/deadName`` if
    ///   the peer closed without a message, ``PortError/Code/malformedMessage``.
    package static func receive(over socket: SharedDescriptor, timeout: Duration?) throws(PortError) -> Message {
        try reportingSystemErrors("waiting for the first message") {
            guard try waitUntilReadable(socket.rawValue, deadline: WaitDeadline(timeout: timeout)) else {
                throw PortError(.timedOut, "no first message arrived")
            }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: WireFormat.maximumInlinePacket + 4096, alignment: 16)
        let control = UnsafeMutableRawBufferPointer.allocate(byteCount: SeqPacketSocket.controlCapacity, alignment: 16)
        defer { buffer.deallocate(); control.deallocate() }
        let packet = try reportingSystemErrors("receiving the first message") { () throws -> ReceivedPacket in
            guard let received = try SeqPacketSocket.receive(socket.rawValue, into: buffer, control: control),
                  !received.isEndOfFile else {
                throw PortError(.deadName, "the peer closed the connection without a message")
            }
            return received
        }
        do {
            let decoded = try InboundPacket.decode(UnsafeRawBufferPointer(buffer), packet)
            switch consume decoded {
            case .message(let content): return Message(content: content)
            default: throw WireRejection(.unknownKind, "a wait packet or a fragment")
            }
        } catch let rejection as WireRejection {
            WireRejections.record(rejection.reason)
            throw PortError(.malformedMessage, "first message: \(rejection)")
        } catch let error as PortError {
            throw error
        } catch {
            preconditionFailure("unreachable")
        }
    }

    /// What `body` returns; a ``SystemError`` it throws comes out as a
    /// ``PortError`` saying it happened while `doing`, a ``PortError`` as is.
    private static func reportingSystemErrors<Result>(
        _ doing: String, _ body: () throws -> Result
    ) throws(PortError) -> Result {
        do {
            return try body()
        } catch let error as SystemError {
            throw PortError(error, doing)
        } catch let error as PortError {
            throw error
        } catch {
            preconditionFailure("unreachable: only SystemError and PortError are thrown")
        }
    }
}
