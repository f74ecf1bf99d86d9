// Harbor — a session answers `harbor ports` for its process, on its own thread.
import HarborPorts
import HarborSystem

extension BootstrapSession {
    /// A ``BootstrapRequest/introspect`` question: believed only from the
    /// name server this process connected to (as the kernel said on the
    /// welcome) or from this process (a server handed in), answered at once,
    /// without waiting, into the reply right the server forwarded (the
    /// asker's own). The table is capped (``PortTable/maximumRows``).
    func answerIntrospection(_ message: inout Message) {
        let sender = message.trailer.sender
        let server = link.current.server
        guard sender.pid == (server?.pid ?? ProcessIdentity.current.pid), message.hasReplyRight else { return }
        let answer: Message
        if PortIntrospection.isEnabled {
            answer = Message(id: 0, text: PortTable.current().encoded)
        } else {
            let refusal = BootstrapError(.notPermitted, "does not show its ports (HARBOR_INTROSPECTION=off)")
            answer = Message(id: refusal.code.rawValue, text: refusal.detail)
        }
        try? message.reply(answer, timeout: .zero)
    }
}
