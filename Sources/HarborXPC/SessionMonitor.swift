// Harbor — SessionMonitor: a piece of an XPC session (XPCSession.swift).
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem

/// The session's notification port and the thread that waits on it.
final class SessionMonitor: Sendable {
    let port = ReceiveRight()
    private let wake: SendRight

    init() { wake = port.makeSendRight() }

    /// Reports each dead-name notification until ``stop()``.
    func run(_ deadName: (PortName) -> Void) {
        let me = ProcessIdentity.current.pid
        while let message = try? port.receive() {
            if case .deadName(let name) = message.notification {
                deadName(name)
            } else if message.id == XPCWire.wake, message.trailer.sender.pid == me {
                return
            }
        }
    }

    /// Ends the thread.
    func stop() { try? wake.send(Message(id: XPCWire.wake), timeout: .zero) }
}
