// Harbor — asking the name server to look inside: a process's ports, a name's record, every uid's names,
// a name's traffic.
import Glibc  // types only: pid_t
import HarborPorts

extension BootstrapClient {
    /// The ports of process `pid` (`harbor ports PID`), answered by that
    /// process itself through its session, the name server having checked
    /// that the caller is root or of the process's uid.
    /// - Throws: ``BootstrapError/Code/notFound`` (no such process holding
    ///   names), ``BootstrapError/Code/notPermitted`` (another uid, or the
    ///   process turned introspection off), ``BootstrapError/Code/timedOut``
    ///   (the process did not answer: stopped, or busy),
    ///   ``BootstrapError/Code/badReply`` (an answer that does not decode, or
    ///   comes from another process than `pid`).
    package func ports(of pid: pid_t) throws(BootstrapError) -> PortTable {
        let reply = try request(BootstrapRequest.ports, body: Array(String(pid).utf8), answeredBy: pid)
        // The kernel says who answered: the process asked about (the server's refusals are thrown above).
        guard reply.trailer.sender.pid == pid else {
            throw BootstrapError(.badReply, "the answer came from pid \(reply.trailer.sender.pid), not \(pid)")
        }
        guard let table = PortTable(decoding: reply.text), table.pid == pid else {
            throw BootstrapError(.badReply, "pid \(pid)'s table of ports did not decode")
        }
        return table
    }

    /// The processes the caller may ask ``ports(of:)`` about: those holding
    /// names, of the caller's uid (root: every uid).
    package func introspectableProcesses() throws(BootstrapError) -> [BootstrapSessionList.Row] {
        let reply = try request(BootstrapRequest.sessions, body: [])
        guard let list = BootstrapSessionList(decoding: reply.text) else {
            throw BootstrapError(.badReply, "the list of sessions did not decode")
        }
        return list.rows
    }

    /// What the name server knows of `name` (`harbor print`), in the
    /// caller's scope or the shared one; root may name another uid's.
    package func report(_ name: String, uid: uid_t? = nil) throws(BootstrapError) -> NameReport {
        try BootstrapName.check(name)
        let body = uid.map { "\(name)\t\($0)" } ?? name
        let reply = try request(BootstrapRequest.print, body: Array(body.utf8))
        guard let report = NameReport(decoding: reply.text) else {
            throw BootstrapError(.badReply, "the record of \(name) did not decode")
        }
        return report
    }

    /// Every uid's names and the shared ones (`harbor list --all`, root only).
    /// - Throws: ``BootstrapError/Code/notPermitted`` unless the caller is root.
    package func listAll() throws(BootstrapError) -> [BootstrapEntry] {
        var entries: [BootstrapEntry] = []
        var cursor: BootstrapListing.Key?
        while true {
            let reply = try request(BootstrapRequest.listAll, body: cursor.map { Array($0.cursor.utf8) } ?? [])
            guard let page = BootstrapListing.decode(reply.text, after: cursor) else {
                throw BootstrapError(.badReply, "the listing did not decode")
            }
            entries += page.entries
            guard page.more, let last = page.entries.last else { return entries }
            cursor = BootstrapListing.key(last)
        }
    }

    /// Has the process holding `name` tap its port and send the records to
    /// `monitor` (`harbor monitor`, `harbor capture`): batches of records
    /// (`PortMonitor.recordsID`), then the closing summary
    /// (`PortMonitor.summaryID`) when the name's port dies. The holder
    /// forwards until `monitor`'s port dies, and copies at most
    /// `bodyPrefix` bytes (at most 4096) of each body.
    ///
    /// The name server checks that the caller is root or the holder's uid
    /// (as the kernel reported it) and passes the question on; the holder
    /// answers itself. Root may name another uid's name (`uid`).
    /// - Returns: the holder's pid (the kernel's word for who answered) and
    ///   the tapped port's number there.
    /// - Throws: ``BootstrapError/Code/notFound`` (no such name, or not held
    ///   by a running process whose receive right is there),
    ///   ``BootstrapError/Code/notPermitted`` (another uid's, or the holder
    ///   turned introspection off), ``BootstrapError/Code/busy`` (the holder
    ///   forwards to as many monitors as it allows), ``BootstrapError/Code/timedOut``
    ///   (the holder did not answer: stopped, or busy).
    package func monitor(_ name: String, uid: uid_t? = nil, bodyPrefix: Int,
                         sendingTo monitor: SendRight) throws(BootstrapError) -> (pid: pid_t, port: UInt64) {
        let record = try report(name, uid: uid)
        guard let pid = record.pid else {
            throw BootstrapError(.notFound, "\(name) is not held by a running process (\(record.state.rawValue))")
        }
        let spec = uid.map { "\(name)\t\($0)" } ?? name
        let reply = try request(BootstrapRequest.monitor, body: Array("\(spec)\n\(max(0, bodyPrefix))".utf8),
                                carrying: [monitor], answeredBy: pid)
        guard reply.trailer.sender.pid == pid, let port = UInt64(reply.text) else {
            throw BootstrapError(.badReply, "the answer came from pid \(reply.trailer.sender.pid), not \(pid), or names no port")
        }
        return (pid, port)
    }
}
