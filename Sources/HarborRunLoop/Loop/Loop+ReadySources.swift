// Harbor — step 7 of a pass: the one ready path of every waitset source, served by `order` (RL09, RL18, RL19).
import HarborPorts
import HarborSystem

/// A waitset source found ready by one `epoll_wait`.
struct ReadySource {
    let order: Int
    /// Its position in the kernel's report: equal orders keep that order.
    let position: Int
    let source: any WaitsetSource
    let events: EpollEvents
}

extension Loop {
    /// Serves the one ready source of a wait. A stale token (the source left
    /// the loop since the event was queued) is dropped.
    func doReady(_ event: EpollEvent, in mode: ModeState) -> Bool {
        guard let token = WaitToken(rawValue: event.token), token.kind == .source,
              let source = state.withLock({ $0.waitSlots.lookup(token) })
        else { return false }
        return source.serve(EpollEvents(rawValue: event.readiness), on: self, in: mode)
    }

    /// Serves every ready source of a wait, lowest `order` first, as CF
    /// serves sources; equal orders keep the kernel's order. The sources are
    /// looked up in one critical section before any callout; each checks
    /// again (valid, still in the mode) just before its own, since an
    /// earlier callout may have removed it. Returns whether any handler ran.
    ///
    /// **Cost:** one lock for the look-ups, a sort of the ready sources,
    /// and no allocation once the depth's list has grown to the batch size.
    func doReadyInOrder(
        _ events: UnsafeMutableBufferPointer<EpollEvent>, count: Int, depth: Int, in mode: ModeState
    ) -> Bool {
        var ready = frames.takeReadyList(at: depth)
        state.withLock { state in
            for index in 0..<count {
                guard let token = WaitToken(rawValue: events[index].token), token.kind == .source,
                      let source = state.waitSlots.lookup(token)
                else { continue }
                ready.append(ReadySource(order: source.order, position: index, source: source,
                                         events: EpollEvents(rawValue: events[index].readiness)))
            }
        }
        ready.sort { $0.order != $1.order ? $0.order < $1.order : $0.position < $1.position }
        var handled = false
        for entry in ready where entry.source.serve(entry.events, on: self, in: mode) { handled = true }
        // Drop the references now; keep the storage for the next pass.
        ready.removeAll(keepingCapacity: true)
        frames.putReadyList(ready, at: depth)
        return handled
    }
}
