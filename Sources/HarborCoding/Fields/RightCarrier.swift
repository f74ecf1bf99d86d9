// Harbor — what the encoder asks of a carrier of a ~Copyable right.
import HarborPorts

/// A ``ReceiveRightCarrier`` or ``SendOnceRightCarrier``, as the encoder
/// moves its right into a message.
protocol RightCarrier: AnyObject {
    /// "receive right" or "send-once right", for errors.
    var kindName: String { get }
    var isTaken: Bool { get }
    /// Takes the right out as a message carries it; nil if already taken.
    func takeCarried() -> CarriedRight?
    /// Puts back a right ``takeCarried()`` took (an encoding that failed).
    func restore(_ right: CarriedRight)
}
