// Harbor — replacing the policy of a running name server (harbord's SIGHUP).
import Glibc  // types only: uid_t

extension BootstrapServer {
    /// Replaces the policy's declarations with `policy`'s, keeping every
    /// name a service holds. Call on the loop's thread.
    ///
    /// - A new declaration makes its name wait for its service (as at
    ///   start-up); a name of the same key checked in without a declaration
    ///   becomes declared (and stops counting against its owner's quota).
    /// - A changed declaration takes its new `owner=` and `unit=`.
    /// - A dropped declaration: a name no service holds goes (the messages
    ///   that waited for it are released: their senders see a dead name);
    ///   one a service holds stays, as if checked in without a declaration
    ///   (it counts against its owner's quota, and goes when its holder does).
    /// - Returns: what changed, one line each (`declared x`, …), for the log.
    @discardableResult
    public func replacePolicy(_ policy: BootstrapPolicy) -> [String] {
        var changes: [String] = []
        var declared: Set<NameKey> = []
        for declaration in policy.declarations {
            let key = NameKey(scope: declaration.isShared ? .shared : .user(declaration.owner), name: declaration.name)
            declared.insert(key)
            if let entry = entries[key] {
                if entry.origin != .declared {
                    if entry.isCounted { charge(entry.owner) { $0.names -= 1 } }
                    entry.origin = .declared
                    changes.append("\(key.name) (\(key.scope)): now declared (held by \(entry.pid.map { "pid \($0)" } ?? "a process"))")
                } else if entry.owner == declaration.owner && entry.unit == declaration.unit {
                    continue
                } else {
                    changes.append("\(key.name) (\(key.scope)): declaration changed")
                }
                entry.owner = declaration.owner
                if entry.unit != declaration.unit { entry.unitRequested = false }
                entry.unit = declaration.unit
            } else {
                let entry = NameEntry(key: key, origin: .declared, owner: declaration.owner, unit: declaration.unit)
                entry.waiting = WaitingPort()
                entries[key] = entry
                changes.append("\(key.name) (\(key.scope)): declared")
            }
        }
        let dropped = entries.values.filter { $0.origin == .declared && !declared.contains($0.key) }
            .sorted { $0.key.name < $1.key.name }
        for entry in dropped {
            if let waiting = entry.waiting {
                _ = handOver(waiting)  // releases the watch and the waiting messages' charges
                entries[entry.key] = nil
                changes.append("\(entry.key.name) (\(entry.key.scope)): no longer declared; removed")
            } else {
                entry.origin = .checkedIn
                entry.unit = nil
                charge(entry.owner) { $0.names += 1 }
                changes.append("\(entry.key.name) (\(entry.key.scope)): no longer declared; stays with its holder until it goes")
            }
        }
        reportIfChanged()
        return changes
    }
}
