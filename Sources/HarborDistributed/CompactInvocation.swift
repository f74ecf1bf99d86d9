// HarborDistributed — a call by number's body: its header in bytes, then the arguments.
import HarborPorts

/// The body a call by number (D08, ``ActorWire/call`` and
/// ``ActorWire/introducingCall``) is sent with: the ``InvocationHeader``
/// written by hand before the arguments, so neither side runs the coder
/// for it (`Docs/Distributed.md`):
///
///     C1                          marker (a HarborCoding body starts 01)
///     u16 LE, bytes               the target's mangled name, UTF-8
///     u8                          the generic substitutions' count
///     (u16 LE, bytes) × count     each substitution's mangled name, UTF-8
///     01 …                        the arguments: a HarborCoding body, an array
///
/// then the link id and the call's number (``ActorWire/append(_:to:)``),
/// which is also the header's ``InvocationHeader/number``. A body that
/// starts with HarborCoding's version byte instead holds the header as the
/// array's first value, as a first call's does (``ActorWire/invocation``);
/// both are taken.
enum CompactInvocation {
    /// The first byte of a compact body.
    static let marker: UInt8 = 0xC1
    /// The longest name either side writes or reads, in bytes.
    static let maximumNameLength = Int(UInt16.max)

    /// The body for a call of `target` with `generics` and the arguments
    /// `arguments` (a HarborCoding body).
    /// - Throws: ``HarborActorSystemError/Code/encodingFailed`` for a name
    ///   longer than ``maximumNameLength`` or more than 255 substitutions.
    static func body(target: String, generics: [String], arguments: [UInt8])
        throws(HarborActorSystemError) -> [UInt8]
    {
        guard generics.count <= Int(UInt8.max) else {
            throw HarborActorSystemError(.encodingFailed, "\(generics.count) generic substitutions")
        }
        var body: [UInt8] = []
        body.reserveCapacity(4 + target.utf8.count + generics.reduce(0) { $0 + 2 + $1.utf8.count } + arguments.count)
        body.append(marker)
        try append(target, to: &body)
        body.append(UInt8(generics.count))
        for name in generics { try append(name, to: &body) }
        body.append(contentsOf: arguments)
        return body
    }

    private static func append(_ name: String, to body: inout [UInt8]) throws(HarborActorSystemError) {
        let count = name.utf8.count
        guard count <= maximumNameLength else {
            throw HarborActorSystemError(.encodingFailed, "a name of \(count) bytes")
        }
        body.append(UInt8(truncatingIfNeeded: count))
        body.append(UInt8(truncatingIfNeeded: count >> 8))
        body.append(contentsOf: name.utf8)
    }

    /// The header of a compact body, taken off `message`'s body (which then
    /// holds the arguments alone), with `number` as its call number; `nil`,
    /// the body untouched, when the body is not compact.
    /// - Throws: ``HarborActorSystemError/Code/invalidInvocation`` for a
    ///   compact body whose header runs past its end or names a string that
    ///   is not UTF-8.
    static func takeHeader(from message: inout Message, number: UInt64) throws(HarborActorSystemError)
        -> InvocationHeader?
    {
        var header: InvocationHeader?
        var end = 0
        try message.content.body.withUnsafeBufferPointer { (bytes) throws(HarborActorSystemError) in
            guard bytes.first == marker else { return }
            var cursor = 1
            let target = try name(in: bytes, at: &cursor)
            guard cursor < bytes.count else { throw malformed("no substitution count") }
            let count = Int(bytes[cursor])
            cursor += 1
            var generics: [String] = []
            generics.reserveCapacity(count)
            for _ in 0..<count { generics.append(try name(in: bytes, at: &cursor)) }
            header = InvocationHeader(target: target, generics: generics, number: number)
            end = cursor
        }
        if header != nil { message.content.body.removeFirst(end) }
        return header
    }

    private static func name(in bytes: UnsafeBufferPointer<UInt8>, at cursor: inout Int)
        throws(HarborActorSystemError) -> String
    {
        guard bytes.count - cursor >= 2 else { throw malformed("a name's length runs past the body") }
        let count = Int(bytes[cursor]) | Int(bytes[cursor + 1]) << 8
        cursor += 2
        guard bytes.count - cursor >= count else { throw malformed("a name runs past the body") }
        guard let name = String(validating: UnsafeBufferPointer(rebasing: bytes[cursor..<(cursor + count)]),
                                as: UTF8.self) else {
            throw malformed("a name is not UTF-8")
        }
        cursor += count
        return name
    }

    private static func malformed(_ detail: String) -> HarborActorSystemError {
        HarborActorSystemError(.invalidInvocation, "the call's header: \(detail)")
    }
}
