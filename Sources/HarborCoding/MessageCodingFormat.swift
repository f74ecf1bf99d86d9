// Harbor — the coded body's version, tags and limits (Docs/Coding.md).
import HarborPorts

/// The binary format ``MessageEncoder`` writes and ``MessageDecoder`` reads:
/// its version and the limits a decoder enforces on bytes from another
/// process. Docs/Coding.md describes the bytes.
///
/// A body is one version byte and then one value: a tag byte and what the
/// tag says follows. Integers are LEB128 varints (signed ones zig-zagged),
/// strings and byte strings a varint length and their bytes, arrays a varint
/// count and their values, keyed containers a varint count and their
/// key–value pairs, and a right, region or file a varint index into the
/// message's carried rights, regions or files: never the right itself as bytes.
public enum MessageCodingFormat {
    /// The version this library writes, and the only one it reads.
    public static let version: UInt8 = 1
    /// The most containers (arrays, keyed containers) nested in one body.
    public static let maximumDepth = 64
    /// The largest body, `Message.maximumBodySize`: a larger
    /// value does not encode, and a larger body is refused before it is read.
    public static let maximumBodySize = Message.maximumBodySize
    /// The most carried rights one value may hold (`Message.maximumCarriedRights`).
    public static let maximumRights = Message.maximumCarriedRights
    /// The most out-of-line regions one value may hold (`Message.maximumRegions`).
    public static let maximumRegions = Message.maximumRegions
    /// The most file descriptors one value may hold (`Message.maximumCarriedFiles`).
    public static let maximumFiles = Message.maximumCarriedFiles

    /// The tag bytes, one per kind of value.
    enum Tag: UInt8 {
        case null = 0x00
        case `false` = 0x01
        case `true` = 0x02
        /// A zig-zag LEB128 varint.
        case signed = 0x03
        /// A LEB128 varint.
        case unsigned = 0x04
        /// Four bytes, little-endian IEEE 754 binary32.
        case float = 0x05
        /// Eight bytes, little-endian IEEE 754 binary64.
        case double = 0x06
        /// A varint byte count, then UTF-8.
        case string = 0x07
        /// A varint byte count, then the bytes (a `[UInt8]` value).
        case bytes = 0x08
        /// A varint count, then that many values.
        case array = 0x09
        /// A varint count, then that many pairs: a key (varint length, UTF-8) and a value.
        case keyed = 0x0A
        /// A varint index into the message's carried rights: a send right.
        case sendRight = 0x0B
        /// A varint index into the carried rights: a send-once right.
        case sendOnceRight = 0x0C
        /// A varint index into the carried rights: a receive right.
        case receiveRight = 0x0D
        /// A varint index into the message's out-of-line regions.
        case region = 0x0E
        /// A varint index into the message's carried files (C07).
        case file = 0x0F
    }
}
