// Harbor — the one kind of source a loop watches through its waitsets: ports, descriptors, processes, signals (RL09, RL18, RL19).
import HarborPorts
import HarborSystem

/// A source whose readiness is a file descriptor: the loop registers that
/// descriptor in the epoll set of each mode the source is in, finds the
/// source again from the event's ``WaitToken`` and asks it to serve.
///
/// Port, descriptor, process and signal sources are all this one kind, as
/// sd-event's sources are one `sd_event_source` behind one dispatch path:
/// one slot table per loop (`LoopState.waitSlots`), one token kind
/// (``WaitToken/Kind/source``), one registration (`Loop+Items.swift`), one
/// ready path (`Loop+ReadySources.swift`). What differs between kinds —
/// which descriptor, which events, what a ready pass does — is the
/// conforming class's, in its own file.
///
/// **A new kind of source is one file:** a `final class` conforming to this
/// protocol (its descriptor, its events, its ``serve(_:on:in:)`` and
/// ``invalidate()`` calling ``leaveEveryLoop()``), with its `Loop.add`,
/// `remove` and `contains` forwarding to `add(.waitset(source), to:)`.
///
/// Like CF's sources, one may be in several loops at once (each registers
/// it; the first to look serves it), and a loop that ends lets it go
/// (`Memberships`).
protocol WaitsetSource: AnyObject, Sendable, CustomStringConvertible {
    /// Lower orders are served first when several sources are ready in one pass.
    var order: Int { get }
    /// False once invalidated: the loop no longer adds or serves it.
    var isValid: Bool { get }
    /// The descriptor the modes' epoll sets watch. It must stay open while
    /// the source is in a loop.
    var waitDescriptor: CInt { get }
    /// What the epoll sets watch the descriptor for (level-triggered).
    var waitEvents: EpollEvents { get }
    /// The loops and modes the source is in, under the source's own lock
    /// (lock order: a loop's lock, then this one).
    var membership: HarborLock<Memberships> { get }
    /// Serves one readiness report of the source in `mode` of `loop`, on the
    /// loop's thread with no lock held: calls the handler (through a
    /// `Callout`) as often as the kind's fairness bound allows. Returns
    /// whether a handler ran (a handled source, RL06).
    func serve(_ events: EpollEvents, on loop: Loop, in mode: ModeState) -> Bool
}

extension WaitsetSource {
    /// Whether `loop` should still serve the source in `mode`: it is valid
    /// and still in that mode (an earlier callout of the pass may have
    /// removed or invalidated it since its event was queued).
    @inline(__always)
    func isServed(by loop: Loop, in mode: ModeState) -> Bool {
        isValid && membership.withLockedValue { $0.contains(mode.name, in: loop) }
    }

    /// Takes the source out of every mode of every loop it is in: the second
    /// half of each kind's `invalidate()`.
    func leaveEveryLoop() {
        for loop in membership.withLockedValue({ $0.loops }) { loop.removeEverywhere(.waitset(self)) }
    }

    /// Re-registers the source in every mode of every loop it is in, after
    /// ``waitEvents`` changed (one `epoll_ctl` per mode).
    func waitEventsChanged() {
        for loop in membership.withLockedValue({ $0.loops }) { loop.waitEventsChanged(self) }
    }
}
