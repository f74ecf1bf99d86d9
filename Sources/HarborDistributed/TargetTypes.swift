// HarborDistributed — a distributed function's parameter and return types, resolved once per process.
import Distributed
import HarborSystem

/// The parameter and return types of one non-generic distributed function,
/// resolved from its mangled name once and kept for the process, so a call
/// to it does not resolve them again.
///
/// `executeDistributedTarget` (the Distributed module's) resolves them on
/// every call (`swift_func_getParameterTypeInfo` and
/// `swift_func_getReturnTypeInfo` demangle the name and look each type up:
/// about 40,000 instructions a call) before it hands them to the runtime's
/// `swift_distributed_execute_target`, which finds the function's accessor
/// by name and runs it. ``execute(on:decoder:system:handler:kept:)`` does the
/// same steps, in the same order, with the types kept here. Only
/// non-generic functions are kept (a generic one's types depend on the
/// call's substitutions); a function is kept only after the runtime found
/// its accessor (a name that runs), so the table holds no more than the
/// process's distributed functions, and at most ``limit``.
///
/// `swift_distributed_execute_target` is not public API: it is declared
/// here as the Distributed module declares it for itself, for the
/// toolchain it was checked against (Swift 6.3); another compiler uses
/// `executeDistributedTarget` for every call (``isAvailable``).
///
/// **Thread safety:** immutable once made; ``cache`` has its own lock.
final class TargetTypes: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set once; the buffers
    // they point to are written only before `init` and read after it.
    /// The most functions kept.
    static let limit = 4096

    /// Whether calls run through this table (the toolchain checked).
    #if compiler(>=6.3) && compiler(<6.4)
    static let isAvailable = true
    #else
    static let isAvailable = false
    #endif

    /// The kept functions, by target name.
    private static let cache = HarborLock<[String: TargetTypes]>([:])

    /// The target's name.
    private let target: String
    /// The target's name, NUL-terminated (what the runtime finds the accessor by).
    private let name: UnsafeMutableBufferPointer<UInt8>
    /// One type per parameter (the buffer the accessor reads them from).
    private let argumentTypes: UnsafeMutableBufferPointer<any Any.Type>
    private let returnType: any Any.Type

    private init(target: String, name: UnsafeMutableBufferPointer<UInt8>,
                 argumentTypes: UnsafeMutableBufferPointer<any Any.Type>, returnType: any Any.Type) {
        self.target = target
        self.name = name
        self.argumentTypes = argumentTypes
        self.returnType = returnType
    }

    deinit {
        name.deallocate()
        argumentTypes.deallocate()
    }

    /// The types of `target`, kept (`kept`) or resolved now; `nil` for a
    /// generic function or a name the runtime resolves no types for (the
    /// caller then uses `executeDistributedTarget`, which reports why).
    static func of(_ target: String) -> (types: TargetTypes, kept: Bool)? {
        guard isAvailable else { return nil }
        if let kept = cache.withLock({ $0[target] }) { return (kept, true) }
        return resolve(target).map { ($0, false) }
    }

    private static func resolve(_ target: String) -> TargetTypes? {
        let utf8 = Array(target.utf8)
        let name = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: utf8.count + 1)
        _ = name.initialize(from: utf8)
        name[utf8.count] = 0
        let start = UnsafePointer(name.baseAddress!)
        let length = UInt(utf8.count)
        // Generic (or no such function): `executeDistributedTarget`'s way.
        guard _getGenericEnvironmentOfDistributedTarget(start, length) == nil else {
            name.deallocate()
            return nil
        }
        let count = __getParameterCount(start, length)
        guard count >= 0 else {
            name.deallocate()
            return nil
        }
        let types = UnsafeMutableBufferPointer<any Any.Type>.allocate(capacity: max(Int(count), 1))
        let decoded = __getParameterTypeInfo(start, length, nil, nil, types.baseAddress!._rawValue, Int(count))
        guard decoded == count, let returnType = __getReturnTypeInfo(start, length, nil, nil) else {
            name.deallocate()
            types.deallocate()
            return nil
        }
        return TargetTypes(target: target, name: name, argumentTypes: types, returnType: returnType)
    }

    /// Runs the function on `actor` with the arguments `decoder` reads and
    /// answers through `handler`, as `executeDistributedTarget` does: a
    /// value through the system's `invokeHandlerOnReturn`, a return through
    /// `onReturnVoid`, any error (the function's, or the runtime's when it
    /// finds no accessor or an argument does not decode) through `onThrow`.
    /// Unless they are `kept` already, keeps these types for the next
    /// call once the runtime found the function.
    func execute(on actor: any DistributedActor, decoder: inout HarborInvocationDecoder,
                 system: HarborActorSystem, handler: HarborResultHandler, kept: Bool) async throws {
        let resultBuffer = UnsafeMutableRawPointer.allocate(byteCount: Self.size(of: returnType),
                                                            alignment: Self.alignment(of: returnType))
        defer { resultBuffer.deallocate() }
        do {
            try await runDistributedTarget(
                on: actor, UnsafePointer(name.baseAddress!), UInt(name.count - 1), argumentDecoder: &decoder,
                argumentTypes: UnsafeRawPointer(argumentTypes.baseAddress!), resultBuffer: UnsafeRawPointer(resultBuffer),
                substitutions: nil, witnessTables: nil, numWitnessTables: 0)
        } catch {
            if !kept, (error as? ExecuteDistributedTargetError)?.errorCode != .targetAccessorNotFound { keep() }
            try await handler.onThrow(error: error)
            return
        }
        if !kept { keep() }
        do {
            if returnType == Void.self {
                try await handler.onReturnVoid()
            } else {
                try await system.invokeHandlerOnReturn(handler: handler, resultBuffer: UnsafeRawPointer(resultBuffer),
                                                       metatype: returnType)
            }
        } catch {
            try await handler.onThrow(error: error)
        }
    }

    /// Adds these types to the table (the runtime found the function).
    private func keep() {
        Self.cache.withLock { cache in
            if cache[target] == nil, cache.count < Self.limit { cache[target] = self }
        }
    }

    private static func size(of type: any Any.Type) -> Int {
        func size<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
        return max(_openExistential(type, do: size), 1)
    }

    private static func alignment(of type: any Any.Type) -> Int {
        func alignment<T>(_: T.Type) -> Int { MemoryLayout<T>.alignment }
        return _openExistential(type, do: alignment)
    }
}

/// The runtime's entry point behind `executeDistributedTarget`: finds the
/// accessor of the function named by the first `targetNameLength` bytes,
/// which decodes the arguments (one type per parameter from
/// `argumentTypes`) with `argumentDecoder`, calls the function on `actor`
/// and stores its value in `resultBuffer`. Throws the function's error, or
/// `ExecuteDistributedTargetError` (`targetAccessorNotFound`) when no
/// function has that name.
@_silgen_name("swift_distributed_execute_target")
private func runDistributedTarget<D: DistributedTargetInvocationDecoder>(
    on actor: AnyObject, _ targetName: UnsafePointer<UInt8>, _ targetNameLength: UInt,
    argumentDecoder: inout D, argumentTypes: UnsafeRawPointer, resultBuffer: UnsafeRawPointer,
    substitutions: UnsafeRawPointer?, witnessTables: UnsafeRawPointer?, numWitnessTables: UInt
) async throws
