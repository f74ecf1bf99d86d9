// Harbor — Listening: a piece of an XPC listener (XPCListener.swift).
import HarborBootstrap
import HarborPorts
import HarborSystem

/// The listener's checked-in port and a send right to wake its thread.
final class Listening: Sendable {
    let port: ReceiveRight
    let wake: SendRight

    init(_ port: consuming ReceiveRight) {
        wake = port.makeSendRight()
        self.port = port
    }
}
