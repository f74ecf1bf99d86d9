// Harbor — a file descriptor as a message carries it: owned, closed with the message.
import HarborSystem

/// One open file a message carries (``Message/attach(_:)-(FileDescriptor)``):
/// the message's own descriptor for it, closed when the last copy of the
/// message's storage that holds it goes, unless someone took it out first.
///
/// Crossing a process it travels as itself in `SCM_RIGHTS` (wire entry kind
/// `file`, Docs/WireFormat.md), never as bytes; in this process the same
/// object moves with the message.
///
/// **Thread safety:** immutable; any thread.
@usableFromInline
package final class CarriedFile: Sendable {
    /// The descriptor, owned: closed when this object dies.
    package let descriptor: SharedDescriptor

    /// Carries `descriptor`, which the message now owns.
    package init(_ descriptor: SharedDescriptor) { self.descriptor = descriptor }
}
