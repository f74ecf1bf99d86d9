// Harbor — which readiness a descriptor source watches for, and which it saw.
import HarborPorts
import HarborSystem

/// Kinds of readiness of a file descriptor, as a descriptor source watches
/// them and as its handler is told about them.
///
/// `hangUp` and `error` are always reported by the kernel, asked for or not
/// (epoll's rule); asking for `hangUp` adds `EPOLLRDHUP`, so a stream socket
/// whose peer shut down writing reports it before any read returns 0.
///
/// **Thread safety:** a value; any thread.
/// **CF equivalent:** `kCFFileDescriptorReadCallBack`,
/// `kCFFileDescriptorWriteCallBack`; `DispatchSource` read/write sources.
public struct DescriptorEvents: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bits, as in the C mask.
    public let rawValue: UInt32
    /// A set made of the given bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data can be read (or a listening socket has a connection waiting). `EPOLLIN`.
    public static let readable = DescriptorEvents(rawValue: EpollEvents.readable.rawValue)
    /// Data can be written without blocking. `EPOLLOUT`.
    public static let writable = DescriptorEvents(rawValue: EpollEvents.writable.rawValue)
    /// The peer hung up: a pipe's writers all closed, a socket's peer shut
    /// down (`EPOLLHUP` or `EPOLLRDHUP`).
    public static let hangUp = DescriptorEvents(rawValue: EpollEvents([.hangUp, .readHangUp]).rawValue)
    /// An error is pending on the descriptor (`EPOLLERR`), e.g. a pipe's reader closed.
    public static let error = DescriptorEvents(rawValue: EpollEvents.error.rawValue)

    /// What epoll is asked to watch for these interests.
    var epollMask: UInt32 { rawValue }

    /// The events epoll reported, folded into the public kinds.
    init(epoll bits: UInt32) {
        var events: DescriptorEvents = []
        for kind in [DescriptorEvents.readable, .writable, .hangUp, .error] where bits & kind.rawValue != 0 {
            events.insert(kind)
        }
        self = events
    }

    public var description: String {
        var names: [String] = []
        if contains(.readable) { names.append("readable") }
        if contains(.writable) { names.append("writable") }
        if contains(.hangUp) { names.append("hangUp") }
        if contains(.error) { names.append("error") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
