// HarborDistributed — the generic substitutions a received call may name.
import Distributed

/// Turns the generic substitutions a received call names into types, taking
/// only names this process can vouch for (D09): every other process is
/// hostile, and the Swift runtime's `_typeByName` would otherwise be handed
/// any bytes a caller sends (a mangled name may hold symbolic references,
/// bytes `0x01`–`0x1F` followed by an offset the runtime follows from the
/// name's own address).
///
/// A call's substitutions are taken only when
/// - there are exactly as many as the target has generic parameters (the
///   runtime reads one per parameter from the buffer it is given, whatever
///   its length), every parameter is a plain type parameter (no packs, no
///   values), and there are at most ``maximumCount``;
/// - each name is at most ``maximumNameLength`` bytes of the characters a
///   plain mangled name is made of (`A`–`Z`, `a`–`z`, `0`–`9`, `_`, `$`),
///   checked before anything looks it up;
/// - `_typeByName` finds a type by it, and that type's `_mangledTypeName` is
///   the same name byte for byte (the canonical name of a type this
///   process has, not another spelling of it);
/// - the type is `Codable` (a distributed function's generic parameters
///   are: the system's serialization requirement), which also leaves out
///   function types, metatypes and non-copyable types.
///
/// The runtime then checks the function's own requirements (its generic
/// signature) against the types, as before.
enum SubstitutionCheck {
    /// The most generic substitutions a call may name.
    static let maximumCount = 16
    /// The longest substitution name taken, in bytes.
    static let maximumNameLength = 512

    /// The types `names` name, for the function `target`; with
    /// `selfType`, a call through a protocol's stub (``StubCall``), whose
    /// first substitution, the stub, is taken as `selfType` (the hosted
    /// actor's type) and the function's requirements are checked here.
    /// - Throws: ``HarborActorSystemError/Code/invalidSubstitution`` for
    ///   the first name refused, or a count other than the target's;
    ///   ``HarborActorSystemError/Code/unknownTarget`` when `selfType` does
    ///   not meet the requirements of the stub's function (the actor does
    ///   not conform to the protocol).
    static func types(_ names: [String], target: String,
                      selfType: (any Any.Type)? = nil) throws(HarborActorSystemError) -> [any Any.Type] {
        guard names.count <= maximumCount else {
            throw HarborActorSystemError(.invalidSubstitution, "\(names.count) generic substitutions, more than \(maximumCount)")
        }
        let expected = parameterCount(of: target)
        guard let expected, expected == names.count else {
            throw HarborActorSystemError(.invalidSubstitution, expected.map {
                "\(names.count) generic substitutions for a function of \($0) generic parameters"
            } ?? "the function's generic parameters are not all plain type parameters")
        }
        var types: [any Any.Type] = []
        for (index, name) in names.enumerated() {
            guard isPlain(name) else {
                throw HarborActorSystemError(.invalidSubstitution, "a substitution name that is no plain mangled name (\(name.utf8.count) bytes)")
            }
            guard let type = _typeByName(name), _mangledTypeName(type) == name else {
                throw HarborActorSystemError(.invalidSubstitution, "\(name) is not the mangled name of a type here")
            }
            guard type is any (Decodable & Encodable).Type else {
                throw HarborActorSystemError(.invalidSubstitution, "\(name) (\(_typeName(type))) is not Codable")
            }
            types.append(index == 0 ? selfType ?? type : type)
        }
        if let selfType, !meetsRequirements(types, target: target) {
            throw HarborActorSystemError(.unknownTarget, "\(target) is not a function of \(_typeName(selfType))")
        }
        return types
    }

    /// Whether `types` meet the requirements of `target`'s generic
    /// signature, as the runtime checks them (its witness tables found).
    static func meetsRequirements(_ types: [any Any.Type], target: String) -> Bool {
        var name = Array(target.utf8)
        guard !name.isEmpty, !types.isEmpty else { return false }
        let environment = name.withUnsafeMutableBufferPointer { bytes in
            distributedGenericEnvironment(bytes.baseAddress!, UInt(bytes.count))
        }
        guard let environment else { return false }
        let (tables, count) = types.withUnsafeBufferPointer { buffer in
            distributedWitnessTables(environment, UnsafeRawPointer(buffer.baseAddress!))
        }
        // Allocated by the runtime, freed as executeDistributedTarget frees it.
        tables.map { UnsafeMutableRawPointer(mutating: $0).deallocate() }
        return count >= 0
    }

    /// Whether `name` is short enough and made only of a plain mangled
    /// name's characters.
    static func isPlain(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maximumNameLength else { return false }
        return bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x5F || byte == 0x24
        }
    }

    /// How many generic parameters the distributed function `target` has,
    /// as the runtime's record of its generic environment says (the
    /// cumulative count of its last level; `GenericEnvironmentDescriptor`,
    /// `swift/ABI/GenericContext.h`): 0 for a function that is not
    /// generic, nil when a parameter is not a plain type parameter.
    static func parameterCount(of target: String) -> Int? {
        var name = Array(target.utf8)
        guard !name.isEmpty else { return 0 }
        let environment = name.withUnsafeMutableBufferPointer { bytes in
            distributedGenericEnvironment(bytes.baseAddress!, UInt(bytes.count))
        }
        guard let environment else { return 0 }
        let flags = environment.loadUnaligned(as: UInt32.self)
        let levels = Int(flags & 0xFFF)
        guard levels > 0 else { return 0 }
        let count = Int(environment.loadUnaligned(fromByteOffset: 4 + 2 * (levels - 1), as: UInt16.self))
        let descriptors = 4 + 2 * levels
        for index in 0..<count {
            // GenericParamDescriptor: the kind in the low 6 bits, 0 a type.
            guard environment.load(fromByteOffset: descriptors + index, as: UInt8.self) & 0x3F == 0 else { return nil }
        }
        return count
    }
}

/// The runtime's record of a distributed function's generic environment,
/// by the function's mangled name (the call `executeDistributedTarget`
/// makes itself); nil for a function that is not generic.
@_silgen_name("swift_distributed_getGenericEnvironment")
private func distributedGenericEnvironment(_ name: UnsafePointer<UInt8>, _ length: UInt) -> UnsafeRawPointer?

/// The witness tables `arguments` (one type per generic parameter of
/// `environment`) give its requirements, in a buffer to free, and their
/// count; a negative count when a requirement is not met (the call
/// `executeDistributedTarget` makes itself).
@_silgen_name("swift_distributed_getWitnessTables")
private func distributedWitnessTables(_ environment: UnsafeRawPointer,
                                      _ arguments: UnsafeRawPointer) -> (UnsafeRawPointer?, Int)
