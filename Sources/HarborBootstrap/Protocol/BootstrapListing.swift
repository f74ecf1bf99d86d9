// Harbor — the listing in pages, so any number of names fits messages of bounded size.

/// How `list` travels: in pages of at most ``pageBytes`` of
/// ``BootstrapEntry/encode(_:)`` lines, in (name, scope) order.
///
/// A list request's body is empty for the first page, else the **cursor** of
/// the last entry the caller has (`name TAB scope`). A page that has more
/// after it ends with the line ``moreMarker``, which no entry line can be.
/// The cursor is a key, not an index: names added or removed between two
/// pages never make a page repeat or skip an entry that stayed.
/// (One 64 KiB body held about 2,500 names.)
package enum BootstrapListing {
    /// Largest page body, in bytes: well under the 64 KiB message body limit.
    package static let pageBytes = 32 * 1024
    /// The last line of a page with more after it.
    package static let moreMarker = "+"

    /// The order of the listing: by name, then shared before each uid.
    package static func key(_ entry: BootstrapEntry) -> Key { Key(name: entry.name, scope: entry.scope) }

    /// An entry's place in the listing.
    package struct Key: Comparable, Sendable {
        package let name: String
        package let scope: BootstrapEntry.Scope

        private var rank: Int64 {
            switch scope {
            case .shared: -1
            case .user(let uid): Int64(uid)
            }
        }

        package static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.name != rhs.name ? lhs.name < rhs.name : lhs.rank < rhs.rank
        }

        package static func == (lhs: Key, rhs: Key) -> Bool { lhs.name == rhs.name && lhs.scope == rhs.scope }

        /// The request body naming this key.
        package var cursor: String {
            switch scope {
            case .shared: "\(name)\tshared"
            case .user(let uid): "\(name)\t\(uid)"
            }
        }

        /// Parses a cursor (hostile input): nil if it is not `NAME TAB SCOPE`.
        package init?(cursor body: [UInt8]) {
            guard let text = String(validating: body, as: UTF8.self) else { return nil }
            let fields = text.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 2, BootstrapName.isValid(fields[0]) else { return nil }
            if fields[1] == "shared" {
                scope = .shared
            } else if let uid = UInt32(fields[1]) {
                scope = .user(uid)
            } else {
                return nil
            }
            name = fields[0]
        }

        package init(name: String, scope: BootstrapEntry.Scope) {
            self.name = name
            self.scope = scope
        }
    }

    /// The page of `sorted` (in ``key(_:)`` order) that starts after `cursor`.
    package static func page(_ sorted: [BootstrapEntry], after cursor: Key?) -> String {
        var start = 0
        if let cursor {
            // The first entry after the cursor: binary search.
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if key(sorted[middle]) <= cursor { low = middle + 1 } else { high = middle }
            }
            start = low
        }
        var index = start
        return page {
            guard index < sorted.count else { return nil }
            defer { index += 1 }
            return sorted[index]
        }
    }

    /// One page of the entries `next` gives, in ``key(_:)`` order, starting
    /// after the cursor: it asks for one entry past what fits, to know
    /// whether more follow (then the page ends with ``moreMarker``).
    package static func page(_ next: () -> BootstrapEntry?) -> String {
        var lines: [String] = []
        var bytes = 0
        var more = false
        while let entry = next() {
            let line = BootstrapEntry.encode([entry])
            // Room for the line, its newline and a final more-marker line.
            if !lines.isEmpty && bytes + line.utf8.count + 1 + moreMarker.utf8.count + 1 > pageBytes {
                more = true
                break
            }
            lines.append(line)
            bytes += line.utf8.count + 1
        }
        if more { lines.append(moreMarker) }
        return lines.joined(separator: "\n")
    }

    /// Decodes one page (hostile input): its entries and whether more follow;
    /// nil if a line is malformed or the page would not move the cursor on.
    package static func decode(_ text: String, after cursor: Key?) -> (entries: [BootstrapEntry], more: Bool)? {
        var body = Substring(text)
        var more = false
        if body == Substring(moreMarker) || body.hasSuffix("\n" + moreMarker) {
            more = true
            body = body.dropLast(moreMarker.utf8.count)
        }
        guard let entries = BootstrapEntry.decode(String(body)) else { return nil }
        if more, entries.isEmpty { return nil }
        if let cursor, let first = entries.first, key(first) <= cursor { return nil }
        return (entries, more)
    }
}
