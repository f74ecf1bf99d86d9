// Harbor — each scope's names in listing order, so a page of `list` costs about its own size, not the table's.
import Glibc  // types only: uid_t

/// The names of every scope, each scope's kept sorted (in
/// ``BootstrapListing/Key`` order), so the names one uid can see (its own
/// scope and the shared one) come out in listing order from any cursor by
/// merging two sorted runs: a page costs O(log n) to find its start and
/// O(1) per entry after that, whatever other uids hold.
///
/// **Cost:** insert and remove: a binary search and one array move of the
/// scope's names (pointer-sized copies). **Thread safety:** a value; the
/// server's is confined to its loop's thread.
package struct ListingIndex: Sendable {
    private var scopes: [BootstrapEntry.Scope: [String]] = [:]

    /// An empty index.
    package init() {}

    /// Names in all scopes.
    package private(set) var count = 0

    /// Adds `key` (nothing if it is there already).
    package mutating func insert(_ key: BootstrapListing.Key) {
        let (index, found) = Self.position(of: key, in: scopes[key.scope] ?? [])
        guard !found else { return }
        scopes[key.scope, default: []].insert(key.name, at: index)
        count += 1
    }

    /// Removes `key` (nothing if it is not there).
    package mutating func remove(_ key: BootstrapListing.Key) {
        // No copy of the run is kept while it changes: one would make the
        // removal copy the whole run (every name retained), and a process
        // leaving with 16,384 names would cost quadratic time.
        guard let (index, found) = scopes[key.scope].map({ Self.position(of: key, in: $0) }), found else { return }
        scopes[key.scope]?.remove(at: index)
        if scopes[key.scope]?.isEmpty == true { scopes[key.scope] = nil }
        count -= 1
    }

    /// The keys `uid` can see (its scope's and the shared ones) after
    /// `cursor`, in listing order. The walk keeps its own copy of the runs:
    /// changes to the index meanwhile do not reach it.
    package func walk(visibleTo uid: uid_t, after cursor: BootstrapListing.Key?) -> Walk {
        Walk(shared: scopes[.shared] ?? [], own: scopes[.user(uid)] ?? [], uid: uid, after: cursor)
    }

    /// The visible keys after a cursor: the shared run and the uid's own run, merged.
    package struct Walk: IteratorProtocol {
        private var shared: ArraySlice<String>
        private var own: ArraySlice<String>
        private let uid: uid_t
        /// Names looked at so far: binary-search probes and keys returned
        /// (what a page costs, counted rather than timed).
        package private(set) var visited = 0

        init(shared: [String], own: [String], uid: uid_t, after cursor: BootstrapListing.Key?) {
            self.uid = uid
            self.shared = shared[...]
            self.own = own[...]
            guard let cursor else { return }
            let sharedStart = ListingIndex.firstIndex(after: cursor, in: shared, scope: .shared, visited: &visited)
            let ownStart = ListingIndex.firstIndex(after: cursor, in: own, scope: .user(uid), visited: &visited)
            self.shared = shared[sharedStart...]
            self.own = own[ownStart...]
        }

        /// The next key in listing order, or nil at the end.
        package mutating func next() -> BootstrapListing.Key? {
            let key: BootstrapListing.Key
            switch (shared.first, own.first) {
            case (nil, nil): return nil
            case (let name?, nil):
                key = BootstrapListing.Key(name: name, scope: .shared)
            case (nil, let name?):
                key = BootstrapListing.Key(name: name, scope: .user(uid))
            case (let sharedName?, let ownName?):
                // Equal names: shared comes first (BootstrapListing.Key's order).
                key = sharedName <= ownName ? BootstrapListing.Key(name: sharedName, scope: .shared)
                    : BootstrapListing.Key(name: ownName, scope: .user(uid))
            }
            if key.scope == .shared { shared.removeFirst() } else { own.removeFirst() }
            visited += 1
            return key
        }
    }

    /// Where `key` is in `names` (one scope's, sorted), or where it would go.
    private static func position(of key: BootstrapListing.Key, in names: [String]) -> (index: Int, found: Bool) {
        var low = 0
        var high = names.count
        while low < high {
            let middle = (low + high) / 2
            if names[middle] < key.name { low = middle + 1 } else { high = middle }
        }
        return (low, low < names.count && names[low] == key.name)
    }

    /// The first index of `names` (sorted, all in `scope`) whose key comes after `cursor`.
    private static func firstIndex(after cursor: BootstrapListing.Key, in names: [String], scope: BootstrapEntry.Scope,
                                   visited: inout Int) -> Int {
        var low = 0
        var high = names.count
        while low < high {
            let middle = (low + high) / 2
            visited += 1
            if BootstrapListing.Key(name: names[middle], scope: scope) <= cursor { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
