// Harbor — a descriptor owned by a reference-counted object, for the transport.
import CHarborLinux
import Glibc

/// A descriptor closed when the last reference to this object goes.
///
/// The transport keeps sockets and memfds in tables, in messages and in
/// closures, where a `~Copyable` ``OwnedDescriptor`` cannot go; this class
/// gives them one owner that ARC counts. The number is never reused while
/// the object lives.
///
/// **Thread safety:** any thread; the number is immutable.
package final class SharedDescriptor: Sendable {
    /// The raw descriptor number, valid while `self` lives.
    package let rawValue: CInt

    /// Takes ownership of `rawValue`, an open descriptor nothing else closes.
    package init(taking rawValue: CInt) {
        precondition(rawValue >= 0, "SharedDescriptor needs an open descriptor, got \(rawValue)")
        self.rawValue = rawValue
    }

    deinit { _ = Glibc.close(rawValue) }

    /// A fresh non-blocking eventfd. C: `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`.
    package static func makeEventDescriptor() throws(SystemError) -> SharedDescriptor {
        let fd = try systemCall("eventfd") { eventfd(0, Int32(charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK)) }
        return SharedDescriptor(taking: fd)
    }
}

/// Descriptors that arrived from another process and are not yet owned by
/// anything: every one still unclaimed when this object dies is closed, so a
/// rejected or half-decoded message cannot leak a descriptor (P09).
///
/// **Thread safety:** confined to the decoding thread.
package final class ArrivedDescriptors {
    /// The numbers as they arrived; a claimed one is replaced by -1 (the
    /// kernel never hands out a negative descriptor), so one array does.
    /// Unchecked: the object belongs to one receive at a time (the pump's
    /// thread), so the runtime's exclusivity check would only cost.
    @exclusivity(unchecked) private var numbers: [CInt]

    package init(_ numbers: [CInt]) {
        self.numbers = numbers
    }

    package var count: Int { numbers.count }

    /// Whether descriptor `index` has been claimed.
    package func isClaimed(_ index: Int) -> Bool { numbers[index] < 0 }

    /// Takes ownership of descriptor `index`; nil if out of range or taken.
    package func claim(_ index: Int) -> SharedDescriptor? {
        guard numbers.indices.contains(index), numbers[index] >= 0 else { return nil }
        let fd = numbers[index]
        numbers[index] = -1
        return SharedDescriptor(taking: fd)
    }

    /// The raw number of descriptor `index`, without claiming it.
    package func peek(_ index: Int) -> CInt? {
        guard numbers.indices.contains(index), numbers[index] >= 0 else { return nil }
        return numbers[index]
    }

    /// How many were never claimed.
    package var unclaimedCount: Int { numbers.lazy.filter { $0 >= 0 }.count }

    deinit {
        for fd in numbers where fd >= 0 { _ = Glibc.close(fd) }
    }
}
