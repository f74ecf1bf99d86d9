// Harbor — step 7 of a pass: ready ports and descriptors, served by `order` (RL09, RL18).
import HarborPorts
import HarborSystem

/// A port or descriptor source found ready by one `epoll_wait`.
struct ReadySource {
    enum Item {
        case port(PortSource)
        case descriptor(DescriptorSource, events: UInt32)
    }

    let order: Int
    /// Its position in the kernel's report: equal orders keep that order.
    let position: Int
    let item: Item
}

extension Loop {
    /// Serves the one ready port or descriptor of a wait. A stale token (the
    /// source left the loop since the event was queued) is dropped.
    func doReady(_ event: EpollEvent, in mode: ModeState) -> Bool {
        guard let token = WaitToken(rawValue: event.token) else { return false }
        switch token.kind {
        case .port:
            guard let port = state.withLock({ $0.portSlots.lookup(token) }) else { return false }
            return doPort(port, in: mode)
        case .descriptor:
            guard let source = state.withLock({ $0.descriptorSlots.lookup(token) }) else { return false }
            return doDescriptor(source, events: event.readiness, in: mode)
        case .wakeUp, .timer, .mainQueue:
            return false
        }
    }

    /// Serves every ready port and descriptor of a wait, lowest `order`
    /// first, as CF serves sources; equal orders keep the kernel's order.
    /// The sources are looked up in one critical section before any
    /// callout; each is checked again (valid, still in the mode) just
    /// before its own, since an earlier callout may have removed it.
    /// Returns whether any handler ran.
    ///
    /// **Cost:** one lock for the look-ups, a sort of the ready sources,
    /// and no allocation once the depth's list has grown to the batch size.
    func doReadyInOrder(
        _ events: UnsafeMutableBufferPointer<EpollEvent>, count: Int, depth: Int, in mode: ModeState
    ) -> Bool {
        var ready = frames.takeReadyList(at: depth)
        state.withLock { state in
            for index in 0..<count {
                guard let token = WaitToken(rawValue: events[index].token) else { continue }
                switch token.kind {
                case .port:
                    guard let port = state.portSlots.lookup(token) else { continue }
                    ready.append(ReadySource(order: port.order, position: index, item: .port(port)))
                case .descriptor:
                    guard let source = state.descriptorSlots.lookup(token) else { continue }
                    ready.append(ReadySource(
                        order: source.order, position: index, item: .descriptor(source, events: events[index].readiness)))
                case .wakeUp, .timer, .mainQueue:
                    continue
                }
            }
        }
        ready.sort { $0.order != $1.order ? $0.order < $1.order : $0.position < $1.position }
        var handled = false
        for entry in ready {
            switch entry.item {
            case .port(let port): if doPort(port, in: mode) { handled = true }
            case .descriptor(let source, let bits): if doDescriptor(source, events: bits, in: mode) { handled = true }
            }
        }
        // Drop the references now; keep the storage for the next pass.
        ready.removeAll(keepingCapacity: true)
        frames.putReadyList(ready, at: depth)
        return handled
    }
}
