// Harbor — P10 listings from the per-scope index: the same pages as sorting every visible name, at the cost of a page.
import HarborBootstrap
import Testing

extension BootstrapTests {
    @Suite struct ListingIndexTests {
        /// Deterministic pseudo-random numbers (SplitMix64).
        struct Random: RandomNumberGenerator {
            var state: UInt64
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }

        static let scopes: [BootstrapEntry.Scope] = [.shared, .user(0), .user(7), .user(1000)]

        static func entry(_ key: BootstrapListing.Key) -> BootstrapEntry {
            BootstrapEntry(name: key.name, scope: key.scope, state: .active, unit: nil, pid: 42)
        }

        /// The listing's definition before the index: every visible name, sorted, paged from the cursor.
        static func expectedPage(_ model: Set<String>, for uid: UInt32, after cursor: BootstrapListing.Key?) -> String {
            let visible = model.compactMap { text -> BootstrapListing.Key? in
                let key = BootstrapListing.Key(cursor: Array(text.utf8))!
                return key.scope == .shared || key.scope == .user(uid) ? key : nil
            }
            return BootstrapListing.page(visible.sorted().map(entry), after: cursor)
        }

        static func indexedPage(_ index: ListingIndex, for uid: UInt32, after cursor: BootstrapListing.Key?) -> (String, Int) {
            var walk = index.walk(visibleTo: uid, after: cursor)
            let page = BootstrapListing.page { walk.next().map(entry) }
            return (page, walk.visited)
        }

        /// P10: over random insertions and removals in four scopes (names
        /// shared between scopes, so equal names meet in the merge), every
        /// page from every kind of cursor (none, a listed key, a key that is
        /// not there, another uid's key) is the page the old definition gives.
        @Test func P10_indexedPagesEqualSortingEveryVisibleName() {
            var random = Random(state: 21)
            var index = ListingIndex()
            var model = Set<String>()  // cursors: "name\tscope"
            for step in 0..<4_000 {
                let key = BootstrapListing.Key(name: "n.\(Int.random(in: 0..<400, using: &random))",
                                               scope: Self.scopes.randomElement(using: &random)!)
                if Bool.random(using: &random) || model.count < 50 {
                    index.insert(key)
                    model.insert(key.cursor)
                } else {
                    index.remove(key)
                    model.remove(key.cursor)
                }
                #expect(index.count == model.count)
                guard step % 97 == 0 else { continue }
                for uid: UInt32 in [0, 7, 1000, 5] {
                    let cursors: [BootstrapListing.Key?] = [nil,
                        model.randomElement(using: &random).flatMap { BootstrapListing.Key(cursor: Array($0.utf8)) },
                        BootstrapListing.Key(name: "n.\(Int.random(in: 0..<400, using: &random))", scope: .user(uid)),
                        BootstrapListing.Key(name: "n.\(Int.random(in: 0..<400, using: &random))", scope: .user(3)),
                        BootstrapListing.Key(name: "n.2", scope: .shared)]
                    for cursor in cursors {
                        let (page, _) = Self.indexedPage(index, for: uid, after: cursor)
                        #expect(page == Self.expectedPage(model, for: uid, after: cursor), "uid \(uid) after \(String(describing: cursor?.cursor))")
                    }
                }
            }
        }

        /// P10: a whole listing of several pages, page by page from each
        /// page's last key as a client asks, equals the old definition's.
        @Test func P10_indexedListingPagesLikeBefore() {
            var index = ListingIndex()
            var model = Set<String>()
            for number in 0..<6_000 {
                let key = BootstrapListing.Key(name: "bulk.\(number)", scope: Self.scopes[number % 4])
                index.insert(key)
                model.insert(key.cursor)
            }
            var cursor: BootstrapListing.Key?
            var pages = 0
            while true {
                let (page, _) = Self.indexedPage(index, for: 7, after: cursor)
                #expect(page == Self.expectedPage(model, for: 7, after: cursor))
                pages += 1
                guard let decoded = BootstrapListing.decode(page, after: cursor), decoded.more,
                      let last = decoded.entries.last else { break }
                cursor = BootstrapListing.key(last)
            }
            #expect(pages > 1, "the listing fitted in one page: paging went untested")
        }

        /// P12: a page costs what it shows, not what other uids hold: with
        /// 16,384 names of uid 1000 in the table, a page for uid 0 from any
        /// cursor looks at no more than its entries, one past them, and two
        /// binary searches.
        @Test func P12_aPageLooksOnlyAtTheCallersAndSharedNames() {
            var index = ListingIndex()
            for number in 0..<16_384 { index.insert(BootstrapListing.Key(name: "other.\(number)", scope: .user(1000))) }
            for number in 0..<3_000 { index.insert(BootstrapListing.Key(name: "mine.\(number)", scope: .user(0))) }
            for number in 0..<50 { index.insert(BootstrapListing.Key(name: "our.\(number)", scope: .shared)) }
            let searches = 2 * (Int.bitWidth - 3_050.leadingZeroBitCount + 1)
            for cursor in [nil, BootstrapListing.Key(name: "mine.2000", scope: .user(0)),
                           BootstrapListing.Key(name: "other.5", scope: .user(1000))] {
                let (page, visited) = Self.indexedPage(index, for: 0, after: cursor)
                let shown = BootstrapListing.decode(page, after: cursor)?.entries.count ?? -1
                #expect(shown > 0)
                #expect(visited <= shown + 1 + searches, "a page of \(shown) looked at \(visited) names")
            }
        }
    }
}
