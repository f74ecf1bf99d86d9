// Harbor — the bootstrap protocol's message ids, names and listing format (Docs/Bootstrap.md).

/// The requests a client sends to its bootstrap port, as message ids, and
/// the rules both sides check. Every request carries a reply right (except
/// ``gone``), which must lead back to the asker's own process, or names one
/// the client registered (``registerReplies``, ``viaRegisteredReply(_:)``);
/// the reply's id is 0 on success, else a ``BootstrapError/Code`` number
/// with a one-line reason as its text.
///
/// The server keeps one send right to the port of each name a service
/// holds and answers look-ups with copies of it (all of them share that one
/// connection): a look-up needs nothing from the holder and costs it
/// nothing new. A process that checks names in or registers them has a
/// **session** (`BootstrapSession`): a port of its own, whose send right
/// rides as right 0 of those requests and identifies the process's names.
package enum BootstrapRequest {
    /// Body: the name. Reply: right 0 is a send right to the name's port.
    package static let lookUp: Int32 = 0x4842_0001
    /// Body: the name; right 0: the caller's session right; right 1: a send
    /// right to the port the caller made for the name. Reply: empty (that
    /// port is the name's port from now on), or right 0 is the receive
    /// right of a declared name that messages already wait in.
    package static let checkIn: Int32 = 0x4842_0002
    /// Body: the name; right 0: the caller's session right; right 1: the
    /// send right it publishes. Reply: empty.
    package static let register: Int32 = 0x4842_0003
    /// Body: the name. Reply: empty.
    package static let unregister: Int32 = 0x4842_0004
    /// Body: empty for the first page, else the cursor of the reply before
    /// (``BootstrapListing``). Reply: one page of the listing.
    package static let list: Int32 = 0x4842_0005
    /// Session to server: body the name's key; right 0: the session right.
    /// The name's port is gone. A session sends it without a reply right; one
    /// with a reply right is answered (empty, or ``BootstrapError/Code/notFound``).
    package static let gone: Int32 = 0x4842_0006
    /// Body: empty; the reply right (a send right) is the one to keep. The
    /// server keeps a copy for the asking process and answers with its
    /// handle: the body is 8 bytes, little-endian. Later requests of that
    /// process name the handle instead of carrying a reply right
    /// (``viaRegisteredReply(_:)``); the registration ends when its port dies.
    package static let registerReplies: Int32 = 0x4842_0007

    /// The bit a request id carries when the request has no reply right and
    /// its body ends with the 8-byte handle of a registered one.
    package static let registeredReplyBit: Int32 = 0x0000_0100

    /// `id` sent without a reply right, naming a registered one.
    package static func viaRegisteredReply(_ id: Int32) -> Int32 { id | registeredReplyBit }

    /// The 8 bytes of a registration's handle, as a body carries them.
    package static func handleBytes(_ handle: UInt64) -> [UInt8] { body([], endingWith: handle) }

    /// `body` followed by the 8 bytes of `handle`, little-endian: a request
    /// naming a registered reply right, made in one allocation. Reserving and
    /// appending takes the specialised path; `init(unsafeUninitializedCapacity:)`
    /// goes through the generic allocation, which looks the storage type up
    /// at run time (about 350 instructions more).
    package static func body(_ body: [UInt8], endingWith handle: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(body.count + 8)
        bytes.append(contentsOf: body)
        withUnsafeBytes(of: handle.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The handle in the last 8 bytes of `body`, or nil if it is shorter.
    package static func handle(endingThe body: [UInt8]) -> UInt64? {
        guard body.count >= 8 else { return nil }
        // Little-endian, as handleBytes writes it.
        return body.withUnsafeBytes {
            UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: $0.count - 8, as: UInt64.self))
        }
    }
}

/// The message id `harbor ping` sends (with a send-once reply right); a
/// service built on Harbor answers it with the same id and body. "PING".
public let bootstrapPingID: Int32 = 0x5049_4E47

/// Checks names on both sides of the protocol.
package enum BootstrapName {
    /// Longest name in bytes (launchd's `name_t` is 128 bytes).
    package static let maximumLength = 128

    /// Whether `name` is a valid service name: 1–128 bytes of `A–Z a–z 0–9 . _ - : @`.
    package static func isValid(_ name: String) -> Bool {
        var name = name
        // A native string's UTF-8 in place: no copy into an array.
        return name.withUTF8 { isValid(bytes: $0) }
    }

    /// `name`'s bytes, a request's body, if it is a valid name; else nil.
    /// Checked and copied from a native string's UTF-8 in place.
    package static func body(_ name: String) -> [UInt8]? {
        var name = name
        return name.withUTF8 { isValid(bytes: $0) ? Array($0) : nil }
    }

    /// Whether `bytes` are a valid service name (so also ASCII, valid UTF-8).
    private static func isValid(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// The name in a request body, or nil if it is not a valid name. The
    /// bytes are checked before a string is made of them: a valid name is
    /// ASCII, so no UTF-8 validation of a hostile body is needed first.
    package static func decode(_ body: [UInt8]) -> String? {
        guard body.withUnsafeBufferPointer({ isValid(bytes: $0) }) else { return nil }
        return String(decoding: body, as: UTF8.self)
    }
}
