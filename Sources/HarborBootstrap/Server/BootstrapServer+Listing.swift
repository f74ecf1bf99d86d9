// Harbor — the name server's listing: one page of the names a uid can see, from the table's listing index.
import HarborPorts

extension BootstrapServer {
    /// One page of the names `sender`'s uid can see (its own and the shared
    /// ones), in listing order after the request's cursor.
    ///
    /// **Cost:** O(log n) to find the cursor in the caller's scope and the
    /// shared one (``ListingIndex``), then O(1) per entry of the page (at
    /// most ``BootstrapListing/pageBytes`` of it): other uids' names are
    /// never looked at, and nothing is sorted per request. (It scanned every
    /// uid's names and sorted the caller's per page: 16,384 names and 3 ×
    /// 1,280 list requests kept harbord at 100 % CPU.) A uid asking for
    /// pages fast is not throttled: each costs it about what its reply carries.
    func list(_ request: inout Message, for sender: ProcessIdentity) {
        var cursor: BootstrapListing.Key?
        if !request.body.isEmpty {
            guard let parsed = BootstrapListing.Key(cursor: request.body) else {
                refuse(&request, BootstrapError(.badRequest, "the listing cursor is malformed"))
                return
            }
            cursor = parsed
        }
        // The walk keeps its own copy of the index: a dead holder found on
        // the way (isAlive) may change the table without disturbing it.
        var walk = entries.listing.walk(visibleTo: sender.uid, after: cursor)
        let page = BootstrapListing.page { () -> BootstrapEntry? in
            while let key = walk.next() {
                if let entry = entries[NameKey(scope: key.scope, name: key.name)], isAlive(entry) { return entry.listing }
            }
            return nil
        }
        send(Message(id: 0, text: page), replyingTo: &request)
    }
}
