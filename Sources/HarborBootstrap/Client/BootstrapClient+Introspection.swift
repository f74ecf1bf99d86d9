// Harbor — asking the name server to look inside: a process's ports, a name's record, every uid's names.
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
}
