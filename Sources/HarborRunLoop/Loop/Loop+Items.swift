// Harbor — adding and removing items (the one registration of every waitset source); common modes.
import HarborPorts
import Synchronization
import HarborSystem

extension Loop {
    /// Adds a version-0 source to `mode` (or to every common mode for
    /// `.common`). Adding it again changes nothing; a source may be in
    /// several loops at once, and each runs it. Any thread.
    /// **CF equivalent:** `CFRunLoopAddSource`.
    public func add(_ source: LoopSource, forMode mode: LoopMode) { add(.source(source), to: mode) }
    /// Schedules a timer in `mode`. A timer belongs to one loop: adding it to
    /// a second loop is ignored (CF logs the same mistake and ignores it).
    /// Any thread. **CF equivalent:** `CFRunLoopAddTimer`, `-[NSRunLoop addTimer:forMode:]`.
    public func add(_ timer: LoopTimer, forMode mode: LoopMode) { addTimer(timer, to: mode) }
    /// Adds an observer to `mode`. An observer belongs to one loop: adding
    /// it to a second loop while it is in another is ignored, as CF does.
    /// Any thread. **CF equivalent:** `CFRunLoopAddObserver`.
    public func add(_ observer: LoopObserver, forMode mode: LoopMode) { add(.observer(observer), to: mode) }

    /// Removes the source from `mode` only (`.common`: from the common set's
    /// modes). **CF equivalent:** `CFRunLoopRemoveSource`.
    public func remove(_ source: LoopSource, forMode mode: LoopMode) { remove(.source(source), from: mode) }
    /// Removes the timer from `mode` only; it stays valid. **CF equivalent:** `CFRunLoopRemoveTimer`.
    public func remove(_ timer: LoopTimer, forMode mode: LoopMode) { removeTimer(timer, from: mode) }
    /// Removes the observer from `mode` only. **CF equivalent:** `CFRunLoopRemoveObserver`.
    public func remove(_ observer: LoopObserver, forMode mode: LoopMode) { remove(.observer(observer), from: mode) }

    /// Whether the source is in `mode`. **CF equivalent:** `CFRunLoopContainsSource`.
    public func contains(_ source: LoopSource, inMode mode: LoopMode) -> Bool { contains(.source(source), mode) }
    /// Whether the timer is in `mode`. **CF equivalent:** `CFRunLoopContainsTimer`.
    public func contains(_ timer: LoopTimer, inMode mode: LoopMode) -> Bool { containsTimer(timer, mode) }
    /// Whether the observer is in `mode`. **CF equivalent:** `CFRunLoopContainsObserver`.
    public func contains(_ observer: LoopObserver, inMode mode: LoopMode) -> Bool { contains(.observer(observer), mode) }

    /// Adds `mode` to the common set: every item added "for common" joins it
    /// now and posted work "for common" runs in it. Adding `.common` or a mode
    /// already in the set changes nothing. **CF equivalent:** `CFRunLoopAddCommonMode`.
    public func addCommonMode(_ mode: LoopMode) {
        guard mode != .common else { return }
        state.withLock { state in
            guard !state.terminated, !state.commonModes.contains(mode) else { return }
            state.commonModes.append(mode)
            let modeState = state.mode(mode)
            modeState.isCommon = true
            for item in state.commonItems { insert(item, into: modeState, state: &state) }
            addCommonTimers(to: modeState, state: state)
            state.wakeIfWaiting()
        }
    }

    /// The common set, in the order its modes joined. **CF equivalent:**
    /// `CFRunLoopCopyAllModes` filtered by commonness (CF has no direct getter).
    public var commonModes: [LoopMode] { state.withLock { $0.commonModes } }

    // MARK: The one implementation behind the typed methods

    func add(_ item: LoopItem, to mode: LoopMode) {
        guard item.isValid else { return }
        state.withLock { state in
            guard !state.terminated else { return }
            // Sources may be in several loops (CF's are); an observer is in one.
            guard !item.isHeld(elsewhereThan: self) else { return }
            if mode == .common {
                if !state.commonItems.contains(where: { $0.identity == item.identity }) {
                    state.commonItems.append(item)
                    item.withMembership(in: self) { $0.isCommon = true }
                }
                for name in state.commonModes { insert(item, into: state.mode(name), state: &state) }
            } else {
                insert(item, into: state.mode(mode), state: &state)
            }
            state.wakeIfWaiting()
        }
    }

    func remove(_ item: LoopItem, from mode: LoopMode) {
        state.withLock { state in
            if mode == .common {
                state.commonItems.removeAll { $0.identity == item.identity }
                item.withMembership(in: self) { $0.isCommon = false }
                for name in state.commonModes {
                    if let modeState = state.modes[name] { extract(item, from: modeState, state: &state) }
                }
            } else if let modeState = state.modes[mode] {
                extract(item, from: modeState, state: &state)
            }
            state.wakeIfWaiting()
        }
    }

    /// Removes `item` from every mode of this loop and from its common items.
    func removeEverywhere(_ item: LoopItem) {
        state.withLock { state in
            state.commonItems.removeAll { $0.identity == item.identity }
            let modes = item.withMembership(in: self) { membership -> Set<LoopMode> in
                membership.isCommon = false
                return membership.modes
            }
            for name in modes {
                if let modeState = state.modes[name] { extract(item, from: modeState, state: &state) }
            }
            state.wakeIfWaiting()
        }
    }

    func contains(_ item: LoopItem, _ mode: LoopMode) -> Bool {
        if mode == .common { return state.withLock { $0.commonItems.contains { $0.identity == item.identity } } }
        return item.withMembership(in: self) { $0.modes.contains(mode) }
    }

    // MARK: Per-mode insertion and extraction (loop lock held)

    private func insert(_ item: LoopItem, into mode: ModeState, state: inout LoopState) {
        let (isNew, cached) = item.withMembership(in: self) { ($0.modes.insert(mode.name).inserted, $0.token) }
        guard isNew else { return }
        switch item {
        case .source(let source):
            mode.sources.append(source)
        case .observer(let observer):
            let index = mode.observers.firstIndex { $0.order > observer.order } ?? mode.observers.endIndex
            mode.observers.insert(observer, at: index)
            mode.recomputeObserverMask()
        case .waitset(let source):
            let token = cached ?? slot(for: item) { state.waitSlots.insert(source, kind: .source) }
            register(source, in: mode, token: token)
        }
    }

    /// A new slot of this loop's table for `item`, kept in its membership
    /// here until it leaves the loop's last mode (loop lock held).
    private func slot(for item: LoopItem, _ insert: () -> WaitToken) -> WaitToken {
        let token = insert()
        item.withMembership(in: self) { $0.token = token }
        return token
    }

    private func extract(_ item: LoopItem, from mode: ModeState, state: inout LoopState) {
        // Leaving this loop's last mode gives back its slot in the loop's table.
        let (wasThere, freed) = item.withMembership(in: self) { membership -> (Bool, WaitToken?) in
            guard membership.modes.remove(mode.name) != nil else { return (false, nil) }
            return (true, membership.isScheduled ? nil : membership.token.take())
        }
        guard wasThere else { return }
        switch item {
        case .source(let source):
            mode.sources.removeAll { $0 === source }
        case .observer(let observer):
            mode.observers.removeAll { $0 === observer }
            mode.recomputeObserverMask()
        case .waitset(let source):
            try? mode.epoll.remove(source.waitDescriptor)
            mode.waitSources.removeAll { $0 === source }
            if let freed { state.waitSlots.remove(freed) }
        }
    }

    // MARK: The one registration of a waitset source (loop lock held)

    /// Registers `source`'s descriptor in `mode`'s waitset under `token`,
    /// its slot in this loop's table. `epoll_ctl` under the loop lock, on
    /// purpose: the kernel's view of the mode must change in the same
    /// critical section as ours, or a racing remove could leave a
    /// registration behind. It never blocks.
    private func register(_ source: any WaitsetSource, in mode: ModeState, token: WaitToken) {
        do {
            try mode.epoll.add(source.waitDescriptor, events: source.waitEvents, token: token.rawValue)
        } catch {
            // EBADF/EPERM (a regular file), EEXIST (the same descriptor twice
            // in one mode): the caller's mistake, reported where CF logs.
            preconditionFailure("Harbor: cannot watch \(source) in mode \(mode.name): \(error)")
        }
        mode.waitSources.append(source)
        mode.waitSources.sort { $0.order < $1.order }
    }

    /// A source's ``WaitsetSource/waitEvents`` changed: re-registers it in
    /// every mode of this loop it is in.
    func waitEventsChanged(_ source: any WaitsetSource) {
        state.withLock { state in
            let membership = source.membership.withLock { $0.membership(in: self) }
            guard let token = membership.token else { return }
            let events = source.waitEvents
            for name in membership.modes {
                guard let mode = state.modes[name] else { continue }
                try? mode.epoll.modify(source.waitDescriptor, events: events, token: token.rawValue)
            }
            state.wakeIfWaiting()
        }
    }
}
