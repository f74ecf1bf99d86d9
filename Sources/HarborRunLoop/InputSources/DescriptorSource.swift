// Harbor — descriptor sources: any file descriptor as a run-loop source (RL18).
import HarborPorts
import Synchronization
import HarborSystem

/// Any file descriptor — a socket, a pipe, a pidfd, a signalfd, another
/// event loop's epoll descriptor — watched by a run loop: the handler runs
/// on the loop's thread whenever the descriptor is ready in one of the
/// watched ways.
///
/// Registration is level-triggered, as CFFileDescriptor's callbacks are
/// re-enabled: while the descriptor stays ready the handler is called once
/// per pass. A handler should therefore consume what made it ready (read the
/// data, accept the connection) or change its interests with
/// ``setEvents(_:)`` (drop `.writable` once the output buffer is empty).
/// Calling the handler once per pass, not once per byte or connection, is
/// what keeps one busy descriptor from starving the loop's other sources.
///
/// The source does not own the descriptor unless made with
/// `closesOnInvalidate: true`; otherwise the caller must keep it open while
/// the source is in a loop and close it only after ``invalidate()``.
/// Handling readiness counts as "handled source" (it ends
/// ``Loop/run(mode:before:)``).
///
/// **Cost:** one `epoll_ctl` per mode on add and remove; per ready pass, one
/// lock to find the source, then the handler. **Thread safety:** every
/// method, any thread; the handler runs on the loop's thread with no lock held.
/// **CF equivalent:** `CFFileDescriptorCreate` +
/// `CFFileDescriptorCreateRunLoopSource` + `CFFileDescriptorEnableCallBacks`
/// (Foundation on Linux lacks it); `DispatchSource.makeReadSource`.
public final class DescriptorSource: Sendable, CustomStringConvertible, WaitsetSource {
    /// The watched descriptor.
    public let descriptor: CInt
    /// Lower orders run first when several descriptors are ready in one pass.
    public let order: Int
    let label: String
    let handler: @Sendable (DescriptorSource, DescriptorEvents) -> Void
    let interests: Atomic<UInt32>
    let membership = HarborLock(Memberships())
    private let valid = Atomic(true)
    /// Set when the source owns its descriptor: closed when the source dies.
    private let owned: OwnedDescriptor?

    /// A source for `descriptor` calling `handler` with what was ready.
    /// - Parameters:
    ///   - descriptor: an open descriptor; the source does not close it
    ///     unless `closesOnInvalidate` is true (then it takes ownership and
    ///     closes it when the source is released, after it left its loop).
    ///   - events: what to watch for; `.hangUp` and `.error` are reported
    ///     whether asked for or not.
    ///   - order: lower runs first among descriptors ready in one pass.
    ///   - closesOnInvalidate: whether the source owns and closes `descriptor`.
    ///   - label: a name for ``Loop/description``.
    ///   - handler: called on the loop's thread with the ready events.
    /// - Throws: ``SourceError/Code/invalidArgument`` for a negative descriptor.
    public convenience init(
        descriptor: CInt, events: DescriptorEvents, order: Int = 0, closesOnInvalidate: Bool = false,
        label: String = "descriptor", _ handler: @escaping @Sendable (DescriptorEvents) -> Void
    ) throws(SourceError) {
        try self.init(descriptor: descriptor, events: events, order: order, closesOnInvalidate: closesOnInvalidate,
                      label: label) { _, events in handler(events) }
    }

    /// The same, with a handler that also gets the source (as CF's
    /// `CFFileDescriptorCallBack` gets its CFFileDescriptor), so it can
    /// change its events or invalidate itself with no box.
    public init(
        descriptor: CInt, events: DescriptorEvents, order: Int = 0, closesOnInvalidate: Bool = false,
        label: String = "descriptor", _ handler: @escaping @Sendable (DescriptorSource, DescriptorEvents) -> Void
    ) throws(SourceError) {
        guard descriptor >= 0 else {
            throw SourceError(.invalidArgument, "DescriptorSource needs an open descriptor, got \(descriptor)")
        }
        self.descriptor = descriptor
        self.order = order
        self.label = label
        self.handler = handler
        interests = Atomic(events.epollMask)
        owned = closesOnInvalidate ? OwnedDescriptor(taking: descriptor) : nil
    }

    /// What the source watches for now.
    public var events: DescriptorEvents { DescriptorEvents(rawValue: interests.load(ordering: .acquiring)) }

    /// Changes what the source watches for, in every mode of every loop it
    /// is in (one `epoll_ctl` per mode). Any thread.
    ///
    /// The last call wins in every loop: each registration is changed
    /// under its loop's lock to the events stored then, and a handler call
    /// that starts after this returns gets only events of the new set
    /// (and `hangUp` or `error`, which epoll always reports), even for a
    /// readiness report a loop took from its waitset before. A handler
    /// call already under way on another loop's thread runs to its end, as
    /// with ``invalidate()``. **CF equivalent:**
    /// `CFFileDescriptorEnableCallBacks` / `CFFileDescriptorDisableCallBacks`.
    public func setEvents(_ events: DescriptorEvents) {
        interests.store(events.epollMask, ordering: .releasing)
        waitEventsChanged()
    }

    /// False once ``invalidate()`` ran.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Removes the source from every mode of every loop it is in; its
    /// handler never runs again. Any thread. **CF equivalent:**
    /// `CFFileDescriptorInvalidate`.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        leaveEveryLoop()
    }

    var waitDescriptor: CInt { descriptor }
    var waitEvents: EpollEvents { EpollEvents(rawValue: interests.load(ordering: .acquiring)) }

    /// Serves one ready descriptor: one handler call per pass (the fairness
    /// bound). A source invalidated or gone from the mode since its event
    /// was queued is skipped; so is a report of events the source no longer
    /// watches for: ``setEvents(_:)`` may have run since the loop took the
    /// report from its waitset (an earlier callout of this pass, or another
    /// thread while this one was between its wait and this call), and the
    /// kernel's registration, which it changed, cannot recall a report
    /// already taken (RL18). Returns whether the handler ran.
    func serve(_ events: EpollEvents, on loop: Loop, in mode: ModeState) -> Bool {
        let wanted = events.rawValue & (interests.load(ordering: .acquiring) | Self.alwaysReported)
        guard wanted != 0, isServed(by: loop, in: mode) else { return false }
        Callout.descriptor(self, DescriptorEvents(epoll: wanted))
        return true
    }

    /// What epoll reports whether asked for or not (`EPOLLHUP`, `EPOLLERR`):
    /// still served after ``setEvents(_:)`` dropped every interest, as a
    /// fresh wait would report them.
    private static var alwaysReported: UInt32 { EpollEvents.hangUp.rawValue | EpollEvents.error.rawValue }

    public var description: String {
        "DescriptorSource(\(label), fd: \(descriptor), events: \(events), order: \(order), valid: \(isValid))"
    }
}

extension Loop {
    /// Adds a descriptor source to `mode` (or every common mode for
    /// `.common`); from then on its descriptor wakes the loop. Any thread.
    /// **CF equivalent:** `CFRunLoopAddSource` with a CFFileDescriptor's source.
    public func add(_ source: DescriptorSource, forMode mode: LoopMode) { add(.waitset(source), to: mode) }
    /// Removes the descriptor source from `mode` only. **CF equivalent:** `CFRunLoopRemoveSource`.
    public func remove(_ source: DescriptorSource, forMode mode: LoopMode) { remove(.waitset(source), from: mode) }
    /// Whether the descriptor source is in `mode`.
    public func contains(_ source: DescriptorSource, inMode mode: LoopMode) -> Bool {
        contains(.waitset(source), mode)
    }
}

extension Callout {
    /// A descriptor source's handler (CF's
    /// `__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION__`).
    @inline(never)
    static func descriptor(_ source: DescriptorSource, _ events: DescriptorEvents) {
        source.handler(source, events)
    }
}
