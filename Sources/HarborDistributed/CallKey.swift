// HarborDistributed — which pending call a send belongs to.
import HarborPorts

/// A pending call on the caller's side: by its own reply port (D01) or by
/// its number (D08).
enum CallKey: Sendable {
    /// A call with a send-once reply right to this port.
    case once(PortName)
    /// A call by number.
    case numbered(UInt64)
}
