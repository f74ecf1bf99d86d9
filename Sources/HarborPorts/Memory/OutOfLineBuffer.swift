// Harbor — out-of-line memory (P08): fill a buffer in place, send it sealed.
import HarborSystem

/// A buffer for a large payload, filled in place and then sent out of line.
///
/// Backed by a memfd mapped writable into this process only until it is
/// attached to a message: ``Message/attach(_:)-(OutOfLineBuffer)`` unmaps it
/// and seals the file against writing, shrinking and growing, so neither the
/// sender nor anyone else can change the bytes afterwards. Receivers, in this
/// process or another, map the same pages read-only: no copy is made at any
/// step, whatever the size (far beyond the socket's packet limit).
///
/// **Cost:** one memfd, one `ftruncate`, one `mmap` to make; one `munmap`
/// and one `fcntl` to seal. Worth it above ``Message/outOfLineThreshold``.
/// **Thread safety:** a value with one owner. **Mach equivalent:** an
/// out-of-line descriptor with `MACH_MSG_VIRTUAL_COPY`.
public struct OutOfLineBuffer: ~Copyable, Sendable {
    private let storage: Storage

    /// The buffer's size in bytes.
    public var count: Int { storage.count }

    /// Makes a zero-filled buffer of `count` bytes.
    /// - Throws: ``PortError/Code/resourceShortage`` when out of memory or descriptors.
    public init(count: Int) throws(PortError) {
        guard count >= 0 else { throw PortError(.invalidArgument, "negative buffer size \(count)") }
        do { storage = try Storage(count: count) } catch {
            throw PortError(error, "making a \(count)-byte out-of-line buffer")
        }
    }

    /// Lends the bytes for filling. Do not keep the pointer.
    public mutating func withUnsafeMutableBytes<Result>(
        _ body: (UnsafeMutableRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        try body(UnsafeMutableRawBufferPointer(start: storage.address, count: storage.count))
    }

    /// Unmaps the writable view and seals the file; the region receivers see.
    package consuming func seal() throws(PortError) -> MappedRegion {
        do { return try storage.seal() } catch { throw PortError(error, "sealing an out-of-line buffer") }
    }

    private final class Storage: @unchecked Sendable {
        // @unchecked: reachable only through the unique OutOfLineBuffer that owns it.
        let file: SharedDescriptor
        let count: Int
        private(set) var address: UnsafeMutableRawPointer?

        init(count: Int) throws(SystemError) {
            file = try MemoryFile.create(name: "harbor-ool")
            try MemoryFile.setSize(file.rawValue, count)
            self.count = count
            // The buffer is made to be filled: populate rather than fault page by page.
            address = count == 0 ? nil : try MemoryFile.map(file.rawValue, size: count, writable: true,
                                                            populate: true)
        }

        func seal() throws(SystemError) -> MappedRegion {
            // A writable shared mapping would make F_SEAL_WRITE fail (EBUSY).
            if let address { MemoryFile.unmap(address, size: count) }
            address = nil
            try MemoryFile.addSeals(file.rawValue, MemoryFile.allSeals)
            return try MappedRegion(sealed: file, limit: Int.max)
        }

        deinit { if let address { MemoryFile.unmap(address, size: count) } }
    }
}

/// A received out-of-line region: read-only, sealed, shared with the sender's
/// pages (P08). Valid for as long as you hold it, independently of the message.
///
/// **Thread safety:** immutable; any thread.
public struct MemoryRegion: Sendable {
    package let mapping: MappedRegion

    package init(mapping: MappedRegion) { self.mapping = mapping }

    /// The region's size in bytes.
    public var count: Int { mapping.count }

    /// Lends the bytes. Do not keep the pointer beyond `body`.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(mapping) { try body(mapping.bytes) }
    }

    /// A copy of the bytes.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

extension Message {
    /// Payloads at least this large are copied into an out-of-line region
    /// when a message is made with ``init(id:payload:)``: every payload that
    /// fits an inline body (``maximumBodySize``) goes inline.
    public static let outOfLineThreshold = maximumBodySize + 1

    /// Makes a message carrying `payload` inline or, when it is at least
    /// ``outOfLineThreshold`` bytes, in one out-of-line region: a private copy
    /// (anonymous memory, recycled by size), which another process receives
    /// copied through the connection in fragments.
    ///
    /// Why a copy and not a sealed memfd: measured across processes on a
    /// 2-CPU VM (Docs/CrossProcess.md), copying through the socket beats a
    /// fresh sealed memfd at every size from 64 KiB to 256 MiB, because a
    /// memfd's pages are allocated, zeroed and faulted in for every message.
    /// To share pages without a copy, fill an ``OutOfLineBuffer`` in place.
    public init(id: Int32, payload: UnsafeRawBufferPointer) throws(PortError) {
        try self.init(id: id, payloadCount: payload.count) { $0.copyMemory(from: payload) }
    }

    /// Makes a message carrying `count` payload bytes that `initialize`
    /// writes in place: Harbor's own memory, so the payload is never copied
    /// before the kernel copies it out (``init(id:payload:)`` copies it once
    /// more from the caller's memory).
    ///
    /// Below ``outOfLineThreshold`` the bytes are the inline body; from it on
    /// they are one private out-of-line region (recycled anonymous memory),
    /// which another process receives through the connection in fragments
    /// written straight into its own region.
    ///
    /// `initialize` must write all `count` bytes: memory it leaves alone
    /// holds whatever this process last kept there (it is recycled, not
    /// cleared, because clearing costs a pass over every page).
    ///
    /// ```swift
    /// let message = try Message(id: 1, payloadCount: frame.count) { bytes in
    ///     frame.render(into: bytes)
    /// }
    /// ```
    /// - Throws: a ``PortError`` wrapping the system error when memory for
    ///   an out-of-line payload cannot be mapped.
    public init(
        id: Int32, payloadCount count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(PortError) {
        precondition(count >= 0, "a payload cannot have a negative size")
        var content = MessageContent(id: id, body: [])
        if count < Message.outOfLineThreshold {
            content.body = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                initialize(UnsafeMutableRawBufferPointer(buffer))
                initialized = count
            }
        } else {
            let region: MappedRegion
            do { region = try MappedRegion(privateCount: count) } catch {
                throw PortError(error, "mapping a \(count)-byte payload")
            }
            initialize(region.privateBytes)
            content.regions.append(region)
        }
        self.init(content: content)
    }

    /// Seals `buffer` and attaches it as an out-of-line region.
    /// - Throws: ``PortError/Code/messageTooLarge`` beyond
    ///   ``maximumRegions`` regions, or a system failure sealing it.
    public mutating func attach(_ buffer: consuming OutOfLineBuffer) throws(PortError) {
        guard content.regions.count < Message.maximumRegions else {
            throw PortError(.messageTooLarge, "more than \(Message.maximumRegions) out-of-line regions")
        }
        content.regions.append(try buffer.seal())
    }

    /// The most out-of-line regions one message carries.
    public static let maximumRegions = 16

    /// The out-of-line regions, in the order attached.
    public var regions: [MemoryRegion] { content.regions.map { MemoryRegion(mapping: $0) } }
}
