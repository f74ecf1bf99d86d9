// Harbor — what a send exported, so a failed send can give it all back.
//
// Exporting a right changes things before the packet leaves: a receive
// right's port is packed up (queue, connections, requests) and becomes a
// proxy; a send-once right to a local port gets a connection. If the send
// then fails (a dead destination, a timeout, a full socket), Mach returns
// the message to the sender with its rights intact; the journal undoes each
// export, newest first, so the message in the `PortError` holds working
// rights again and no port hears of a closing that did not happen.
import HarborSystem
import HarborPorts

/// Records the undo actions of one send's exports.
///
/// **Thread safety:** confined to the sending thread.
final class ExportJournal {
    private var undos: [() -> Void] = []

    /// Exports `right` (as `PortCore.export`) and remembers how to undo it.
    func export(_ right: CarriedRight) throws(PortError) -> ExportedRight {
        let exported = try PortCore.export(right)
        if let undo = exported.undo { undos.append(undo) }
        return exported
    }

    /// Undoes every export, newest first. Call only after the send failed
    /// and before the message is handed back.
    func rollBack() {
        let pending = undos
        undos.removeAll()
        for undo in pending.reversed() { undo() }
    }
}
