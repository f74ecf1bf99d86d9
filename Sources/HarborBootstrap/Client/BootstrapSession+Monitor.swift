// Harbor — a session taps one of its names' ports for `harbor monitor` / `harbor capture`, and
// forwards the records to the monitor's port from a thread of its own.
import HarborCapture
import HarborPorts
import HarborSystem
import Synchronization

extension BootstrapSession {
    /// The most monitors one process forwards to at once: each costs a
    /// thread, a connection to its monitor and a tap of at most
    /// ``monitorCapacity`` records of at most ``monitorBodyPrefix`` bytes.
    static let maximumMonitors = 4
    /// The most records a monitor's tap holds before it counts drops.
    static let monitorCapacity = 1024
    /// The most body bytes a monitor's record copies.
    static let monitorBodyPrefix = 4096
    /// Monitors this process forwards to now.
    private static let monitors = Atomic<Int>(0)

    /// A ``BootstrapRequest/tap`` question: believed only from the name
    /// server this process connected to (as the kernel said on the welcome)
    /// or from this process. Taps the named port, if its receive right is
    /// in this process, and answers the asker at once with the port's number
    /// (or why not) through the reply right the server forwarded; the
    /// records then go to the monitor's port from a thread of their own
    /// until that port or the name's port dies.
    func answerTap(_ message: inout Message) {
        let sender = message.trailer.sender
        let server = link.current.server
        guard sender.pid == (server?.pid ?? ProcessIdentity.current.pid), message.hasReplyRight else { return }
        let answer: Message
        do throws(BootstrapError) {
            let port = try startMonitor(&message)
            answer = Message(id: 0, text: String(port.rawValue))
        } catch {
            answer = Message(id: error.code.rawValue, text: error.detail)
        }
        try? message.reply(answer, timeout: .zero)
    }

    /// Arms the tap and starts its forwarding thread; the tapped port.
    private func startMonitor(_ message: inout Message) throws(BootstrapError) -> PortName {
        guard PortIntrospection.isEnabled else {
            throw BootstrapError(.notPermitted, "does not let its ports be monitored (HARBOR_INTROSPECTION=off)")
        }
        let fields = message.text.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 2, let prefix = Int(fields[1]), prefix >= 0, message.carriedRights == [.send],
              let destination = try? message.takeSendRight(at: 0) else {
            throw BootstrapError(.badRequest, "a tap question is NAME tab BODY-PREFIX, with one send right")
        }
        let name = String(fields[0])
        guard let right = table.withLock({ $0.names[name]?.right }), !right.isDead else {
            throw BootstrapError(.notFound, "holds no live name \(name)")
        }
        guard Self.monitors.add(1, ordering: .acquiringAndReleasing).newValue <= Self.maximumMonitors else {
            Self.monitors.subtract(1, ordering: .acquiringAndReleasing)
            throw BootstrapError(.busy, "already forwards to \(Self.maximumMonitors) monitors")
        }
        let tap: PortTap
        do {
            tap = try right.tapReceivedHere(bodyPrefix: min(prefix, Self.monitorBodyPrefix), capacity: Self.monitorCapacity)
        } catch {
            Self.monitors.subtract(1, ordering: .acquiringAndReleasing)
            throw BootstrapError(.notFound, "cannot tap \(name): \(error.detail)")
        }
        let monitor = PortMonitor(tap: tap, sendingTo: destination)
        do {
            try SystemThread.spawn { Self.forward(monitor, tap: tap, to: destination) }.detach()
        } catch {
            tap.cancel()
            Self.monitors.subtract(1, ordering: .acquiringAndReleasing)
            throw BootstrapError(.busy, "no thread to forward from: \(error)")
        }
        return right.name
    }

    /// The forwarding thread: records out until the name's port dies (the
    /// closing summary then goes) or the monitor's port does.
    private static func forward(_ monitor: PortMonitor, tap: PortTap, to destination: SendRight) {
        while monitor.forward(timeout: .milliseconds(500)) {
            if destination.isDead { break }
        }
        tap.cancel()
        monitor.finish()
        monitors.subtract(1, ordering: .acquiringAndReleasing)
    }
}
