// Harbor — a fragmented message being put back together from its fragments.
//
// The first packet of a fragmented message is decoded like any other (its
// rights imported, its copied regions allocated); the regions' bytes follow
// in fragment packets from the same process on the same connection, in
// order (Docs/WireFormat.md). Fragments are hostile input like the rest:
// one can only fill the regions the first packet declared, never more.

/// A message whose copied regions are still arriving.
///
/// **Thread safety:** confined to the pump that holds it (under its lock).
package struct FragmentAssembly {
    package private(set) var content: MessageContent
    /// The process sending the fragments (SCM_CREDENTIALS of the first packet).
    package let sender: ProcessIdentity
    /// Indices in `content.regions` of the copied regions, in order.
    private var targets: [Int]
    private var target = 0
    private var offset = 0

    package init(content: MessageContent, sender: ProcessIdentity) {
        self.content = content
        self.sender = sender
        targets = content.regions.indices.filter { content.regions[$0].descriptor == nil }
    }

    package var isComplete: Bool { target == targets.count }

    /// Where the next fragment's bytes go: the unfilled rest of the current region.
    package var nextDestination: UnsafeMutableRawBufferPointer? {
        guard !isComplete else { return nil }
        let region = content.regions[targets[target]].privateBytes
        return UnsafeMutableRawBufferPointer(rebasing: region[offset...])
    }

    /// Copies one fragment's bytes into the regions. A fragment never
    /// straddles two regions' ends beyond what is declared: more bytes than
    /// remain are refused.
    package mutating func append(_ bytes: UnsafeRawBufferPointer) throws(WireRejection) {
        var rest = bytes
        while !rest.isEmpty {
            guard let destination = nextDestination else {
                throw WireRejection(.badFragment, "\(rest.count) bytes beyond the declared regions")
            }
            let count = min(destination.count, rest.count)
            destination.baseAddress!.copyMemory(from: rest.baseAddress!, byteCount: count)
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            advance(by: count)
        }
    }

    /// Records `count` bytes written straight into ``nextDestination``.
    package mutating func advance(by count: Int) {
        offset += count
        while !isComplete, offset == content.regions[targets[target]].count {
            target += 1
            offset = 0
        }
    }
}
