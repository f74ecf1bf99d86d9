// Harbor — fixed-width little-endian integers read from a byte array whose
// length the caller checked (CaptureRecordFormat.decode).

/// Reads little-endian integers at offsets the caller has checked lie
/// inside the bytes (a bad offset traps, as an index out of range does).
struct LittleEndianReader {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func byte(at offset: Int) -> UInt8 { bytes[offset] }

    func u16(at offset: Int) -> UInt16 { UInt16(truncatingIfNeeded: value(at: offset, count: 2)) }

    func u32(at offset: Int) -> UInt32 { UInt32(truncatingIfNeeded: value(at: offset, count: 4)) }

    func u64(at offset: Int) -> UInt64 { value(at: offset, count: 8) }

    private func value(at offset: Int, count: Int) -> UInt64 {
        var result: UInt64 = 0
        for index in (0..<count).reversed() { result = result << 8 | UInt64(bytes[offset + index]) }
        return result
    }
}
