// Harbor — tapping a port through its receive right.
import HarborSystem

extension ReceiveRight {
    /// Arms a tap on this port: from now on every message the port admits
    /// to its queue, from this process or another, makes a
    /// ``PortCaptureRecord`` the returned ``PortTap`` hands out, until it is
    /// cancelled or released.
    ///
    /// - Parameters:
    ///   - bodyPrefix: the most body bytes each record copies, 0 to
    ///     ``PortTap/maximumBodyPrefix`` (default 64).
    ///   - capacity: the most records held for the reader, 1 to
    ///     ``PortTap/maximumCapacity`` (default 4096); past that, admitted
    ///     messages are counted as dropped instead of waiting for the reader.
    /// - Throws: ``PortError/Code/invalidArgument`` outside those ranges.
    ///
    /// Costs the port nothing until armed (one nil check per admission);
    /// armed, each admission copies the counts, sizes, sender and prefix
    /// into the tap's buffer under the tap's own lock, and never waits.
    public func tap(bodyPrefix: Int = 64, capacity: Int = 4096) throws(PortError) -> PortTap {
        try core.tap(bodyPrefix: bodyPrefix, capacity: capacity)
    }
}
