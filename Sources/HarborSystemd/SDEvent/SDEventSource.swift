// Harbor — sd-event sources made from Swift closures: io, time, signal, defer.
import CSystemd
import Glibc  // constants only: EINVAL

/// An event source of an ``SDEventLoop`` whose handler is a Swift closure.
///
/// The source lives while this object lives: releasing it (or
/// ``cancel()``) disables and unrefs it (`sd_event_source_disable_unref`).
/// The closure is released when sd-event destroys the source.
///
/// **Cost:** one allocation for the closure; dispatch is one C call into Swift.
/// **Thread safety:** use on the loop's thread only (sd-event is
/// single-threaded); the handler runs there, inside `sd_event_dispatch`.
/// **Darwin equivalent:** a `CFRunLoopSource`/`CFRunLoopTimer` of the other loop.
public final class SDEventSource {
    /// The `sd_event_source *`, borrowed (for libsystemd's own C setters).
    public private(set) var pointer: OpaquePointer?

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { cancel() }

    /// Disables and releases the source; its handler never runs again.
    public func cancel() {
        if let pointer { sd_event_source_disable_unref(pointer) }
        pointer = nil
    }

    /// How a source is enabled (`SD_EVENT_OFF`, `SD_EVENT_ON`, `SD_EVENT_ONESHOT`).
    public enum Enabled: Int32, Sendable {
        /// Never dispatched.
        case off = 0
        /// Dispatched each time it is ready.
        case on = 1
        /// Dispatched once, then off.
        case oneShot = -1
    }

    /// Enables, disables or one-shots the source (`sd_event_source_set_enabled`).
    public func setEnabled(_ enabled: Enabled) throws(SystemdError) {
        guard let pointer else { return }
        _ = try checkSystemd(sd_event_source_set_enabled(pointer, enabled.rawValue), "sd_event_source_set_enabled")
    }

    /// Moves a time source's deadline to `delay` from now and enables it once
    /// (`sd_event_source_set_time_relative`).
    public func setTime(after delay: Duration) throws(SystemdError) {
        guard let pointer else { return }
        _ = try checkSystemd(
            sd_event_source_set_time_relative(pointer, UInt64(max(0, delay.microsecondsRoundedUp))),
            "sd_event_source_set_time_relative")
        try setEnabled(.oneShot)
    }

    /// Sets the dispatch priority (lower runs first; sd-event's default is 0).
    public func setPriority(_ priority: Int64) throws(SystemdError) {
        guard let pointer else { return }
        _ = try checkSystemd(sd_event_source_set_priority(pointer, priority), "sd_event_source_set_priority")
    }
}

/// The closure behind a source; sd-event holds one retained reference as
/// userdata and drops it in the destroy callback.
final class SourceHandler {
    let call: (UInt32) -> Void
    init(_ call: @escaping (UInt32) -> Void) { self.call = call }

    /// Retained userdata for libsystemd.
    func retainedPointer() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> SourceHandler? {
        userdata.map { Unmanaged<SourceHandler>.fromOpaque($0).takeUnretainedValue() }
    }
}

private let releaseHandler: @convention(c) (UnsafeMutableRawPointer?) -> Void = { userdata in
    if let userdata { Unmanaged<SourceHandler>.fromOpaque(userdata).release() }
}

extension SDEventLoop {
    /// A source run on the next iteration, and on every iteration while on
    /// (`sd_event_add_defer`); usually made one-shot.
    public func addDefer(enabled: SDEventSource.Enabled = .oneShot, _ handler: @escaping () -> Void) throws(SystemdError) -> SDEventSource {
        try checkThread("sd_event_add_defer")
        let box = SourceHandler { _ in handler() }
        var source: OpaquePointer?
        let result = sd_event_add_defer(pointer, &source, { _, userdata in
            SourceHandler.from(userdata)?.call(0)
            return 0
        }, box.retainedPointer())
        let made = try adopt(result, source, box, "sd_event_add_defer")
        try made.setEnabled(enabled)
        return made
    }

    /// A one-shot CLOCK_MONOTONIC timer `delay` from now, dispatched no later
    /// than `delay + accuracy` (`sd_event_add_time_relative`; accuracy zero
    /// means 1 µs here, not sd-event's 250 ms default).
    public func addTime(after delay: Duration, accuracy: Duration = .zero, _ handler: @escaping () -> Void) throws(SystemdError) -> SDEventSource {
        try checkThread("sd_event_add_time_relative")
        let box = SourceHandler { _ in handler() }
        var source: OpaquePointer?
        let result = sd_event_add_time_relative(
            pointer, &source, CLOCK_MONOTONIC, UInt64(max(0, delay.microsecondsRoundedUp)),
            UInt64(max(1, accuracy.microsecondsRoundedUp)),
            { _, _, userdata in
                SourceHandler.from(userdata)?.call(0)
                return 0
            }, box.retainedPointer())
        return try adopt(result, source, box, "sd_event_add_time_relative")
    }

    /// A descriptor watched for `events` (EPOLLIN, EPOLLOUT, …); the handler
    /// gets the ready events (`sd_event_add_io`). The descriptor stays the caller's.
    public func addIO(_ descriptor: CInt, events: UInt32, _ handler: @escaping (UInt32) -> Void) throws(SystemdError) -> SDEventSource {
        try checkThread("sd_event_add_io")
        let box = SourceHandler(handler)
        var source: OpaquePointer?
        let result = sd_event_add_io(pointer, &source, descriptor, events, { _, _, revents, userdata in
            SourceHandler.from(userdata)?.call(revents)
            return 0
        }, box.retainedPointer())
        return try adopt(result, source, box, "sd_event_add_io")
    }

    /// A Unix signal delivered through sd-event's signalfd
    /// (`sd_event_add_signal` with `SD_EVENT_SIGNAL_PROCMASK`: the signal is
    /// blocked in the calling thread for as long as the source lives). Only
    /// signals sent to this thread or to the process reach it.
    public func addSignal(_ signal: CInt, _ handler: @escaping (CInt) -> Void) throws(SystemdError) -> SDEventSource {
        try checkThread("sd_event_add_signal")
        let box = SourceHandler { number in handler(CInt(bitPattern: number)) }
        var source: OpaquePointer?
        let result = sd_event_add_signal(pointer, &source, signal | SD_EVENT_SIGNAL_PROCMASK, { _, info, userdata in
            SourceHandler.from(userdata)?.call(info?.pointee.ssi_signo ?? 0)
            return 0
        }, box.retainedPointer())
        return try adopt(result, source, box, "sd_event_add_signal")
    }

    /// Takes ownership of a just-made source, or releases the closure if
    /// libsystemd refused.
    private func adopt(_ result: Int32, _ source: OpaquePointer?, _ box: SourceHandler, _ call: String) throws(SystemdError) -> SDEventSource {
        guard result >= 0, let source else {
            Unmanaged.passUnretained(box).release()
            throw SystemdError(returned: result < 0 ? result : -EINVAL, call: call)
        }
        sd_event_source_set_destroy_callback(source, releaseHandler)
        return SDEventSource(source)
    }
}
