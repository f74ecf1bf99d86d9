// Harbor — one value of a parsed body, as the decoder walks it.
import HarborPorts

/// One value of a body that ``BodyReader`` has checked: the values of a
/// body are laid out flat, in the order they appear, a container's values
/// right after it, so a container's values are the nodes from its index +
/// 1 up to its ``end``.
struct TapeNode {
    let tag: MessageCodingFormat.Tag
    /// Where the value's key (checked UTF-8) starts in the body when the
    /// value is in a keyed container, else -1; keys are compared as bytes,
    /// never made into strings unless `allKeys` asks.
    let keyStart: Int32
    /// The key's length in bytes.
    let keyLength: Int32
    /// The index of the first node after this value and everything in it.
    var end: Int32
    /// A container's number of values; a byte string's length.
    var count: Int32
    /// A byte string's offset in the body.
    let start: Int32
    /// An integer's varint (zig-zagged if signed), a float's bits, a
    /// string's index in ``DecodingState/strings``, a right's or region's index.
    let payload: UInt64
}
