// Harbor — a reference that does not keep its object alive, for a table that is its object's own weak table.
import CHarborLinux

/// A pointer to an object that does not retain it, for a table whose
/// objects remove themselves from it, under the table's lock, in their
/// `deinit`: while the reference is in the table, the object's memory is
/// there, whether or not the object is still alive.
///
/// Why not `weak`: a weak reference gives its object a side table (one
/// more allocation), and from then on every retain and release of the
/// object takes the runtime's slow path, where the object's count lives in
/// that table. A port standing for a right is retained and released many
/// times a message; with this reference its counts stay in its header.
///
/// The contract that keeps it sound, the holder's to keep: read
/// ``retainedIfLive()`` only under the lock the object's `deinit` takes to
/// remove the reference, and release what it returns outside that lock
/// (the last release runs the `deinit`, which takes the lock).
///
/// **Thread safety:** a value; what it points to is guarded by its holder.
package struct UnretainedReference<Object: AnyObject>: @unchecked Sendable {  // @unchecked: see the contract above
    @usableFromInline let address: UnsafeMutableRawPointer

    /// Points to `object` without retaining it.
    @inlinable
    package init(_ object: Object) {
        address = Unmanaged.passUnretained(object).toOpaque()
    }

    /// Whether this points to `object` (which may be in its `deinit`); touches nothing.
    @inlinable
    package func points(to object: Object) -> Bool {
        address == Unmanaged.passUnretained(object).toOpaque()
    }

    /// The object, retained, or nil once its last strong reference has
    /// gone (its `deinit` has begun or is about to). What a weak load does,
    /// without the side table. Swift runtime: `swift_tryRetain`
    /// (declared in the C shim).
    @inlinable
    package func retainedIfLive() -> Object? {
        guard charbor_swift_try_retain(address) != nil else { return nil }
        return Unmanaged<Object>.fromOpaque(address).takeRetainedValue()
    }
}
