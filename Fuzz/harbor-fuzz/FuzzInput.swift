// Harbor fuzzing — reading and writing the inputs' little programs.
//
// Every byte string is a valid program: a read past the end yields zero,
// and every count and choice is taken modulo its range. So libFuzzer's
// byte-level mutations always produce something the harness can run, and
// the structure-aware mutator (Mutator.swift) can parse, edit and write
// programs back without ever failing.
import HarborSystem
import HarborTransport

/// Reads little-endian numbers from a fuzz input; zero past the end.
struct FuzzReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }
    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

    /// A choice among `count` alternatives.
    mutating func choice(_ count: Int) -> Int { Int(byte()) % count }

    mutating func flag() -> Bool { byte() & 1 != 0 }

    /// `count` bytes (fewer, zero-padded, past the end).
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in byte() }
    }
}

/// Writes what `FuzzReader` reads.
struct FuzzWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func byte(_ value: Int) { bytes.append(UInt8(truncatingIfNeeded: value)) }
    mutating func flag(_ value: Bool) { bytes.append(value ? 1 : 0) }
    mutating func u16(_ value: UInt16) { byte(Int(value & 0xFF)); byte(Int(value >> 8)) }
    mutating func u16(_ value: Int) { u16(UInt16(truncatingIfNeeded: value)) }
    mutating func u32(_ value: UInt32) { u16(UInt16(value & 0xFFFF)); u16(UInt16(value >> 16)) }
    mutating func u64(_ value: UInt64) { u32(UInt32(value & 0xFFFF_FFFF)); u32(UInt32(value >> 32)) }
    mutating func bytes(_ values: [UInt8]) { bytes.append(contentsOf: values) }
}

/// A deterministic generator for the mutator's choices (libFuzzer passes a seed).
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
