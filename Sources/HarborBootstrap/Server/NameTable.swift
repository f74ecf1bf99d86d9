// Harbor — the name server's table of names, with the listing order kept beside it.

/// The names the server keeps, by key, and the same keys in listing order
/// (``ListingIndex``), kept in step by every insertion and removal here.
/// Confined to the server loop's thread.
///
/// It reads like the dictionary it wraps (`entries[key]`, `entries[key] =
/// nil`, `entries.values`), so code that changes the table cannot forget
/// the index.
struct NameTable: ExpressibleByDictionaryLiteral {
    private var byKey: [NameKey: NameEntry] = [:]
    /// The keys, each scope's in listing order.
    private(set) var listing = ListingIndex()

    /// An empty table.
    init() {}

    init(dictionaryLiteral elements: (NameKey, NameEntry)...) {
        for (key, entry) in elements { self[key] = entry }
    }

    subscript(key: NameKey) -> NameEntry? {
        get { byKey[key] }
        set {
            if let newValue {
                if byKey.updateValue(newValue, forKey: key) == nil { listing.insert(key.listingKey) }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Removes the name at `key`; what was there.
    @discardableResult
    mutating func removeValue(forKey key: NameKey) -> NameEntry? {
        guard let removed = byKey.removeValue(forKey: key) else { return nil }
        listing.remove(key.listingKey)
        return removed
    }

    var values: Dictionary<NameKey, NameEntry>.Values { byKey.values }
    var keys: Dictionary<NameKey, NameEntry>.Keys { byKey.keys }
    var count: Int { byKey.count }
    var isEmpty: Bool { byKey.isEmpty }
}

extension NameKey {
    /// Its place in the listing.
    var listingKey: BootstrapListing.Key { BootstrapListing.Key(name: name, scope: scope) }
}
