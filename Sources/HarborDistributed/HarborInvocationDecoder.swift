// HarborDistributed — reads a call's arguments out of its message.
import Distributed
import HarborCoding

/// Reads a received call's generic substitutions and arguments, one at a
/// time, out of its message (`MessageValueReader`: the whole body was
/// checked as hostile input first). The Swift runtime uses it while
/// ``HarborActorSystem`` executes the call; code does not use it directly.
///
/// **Thread safety:** one owner (the task executing the call).
public final class HarborInvocationDecoder: DistributedTargetInvocationDecoder {
    /// Arguments and results are `Codable` (coded by `HarborCoding`).
    public typealias SerializationRequirement = any Codable

    private var reader: MessageValueReader
    private let generics: [String]
    private let target: String
    /// For a call through a protocol's stub (D10): the hosted actor's type,
    /// which stands for the stub, the first substitution.
    private let selfType: (any Any.Type)?

    init(reader: consuming MessageValueReader, header: InvocationHeader, selfType: (any Any.Type)? = nil) {
        self.reader = reader
        generics = header.generics
        target = header.target
        self.selfType = selfType
    }

    /// The generic substitutions, looked up by their mangled names once
    /// each is checked (D09, `SubstitutionCheck`): exactly one per generic
    /// parameter of the function, each the canonical mangled name of a
    /// `Codable` type in this process.
    /// A call through a `@Resolvable` protocol's stub (D10) gets the hosted
    /// actor's own type for the stub.
    /// - Throws: ``HarborActorSystemError/Code/invalidSubstitution`` for a
    ///   name refused, or a count other than the function's;
    ///   ``HarborActorSystemError/Code/unknownTarget`` for a stub's function
    ///   the actor does not have (it does not conform to the protocol).
    public func decodeGenericSubstitutions() throws -> [any Any.Type] {
        try SubstitutionCheck.types(generics, target: target, selfType: selfType)
    }

    /// The next argument, as the type the function declares.
    /// - Throws: ``HarborActorSystemError/Code/invalidInvocation`` when the
    ///   body holds no more values or a value of another type.
    public func decodeNextArgument<Argument: Codable>() throws -> Argument {
        do {
            return try reader.next(Argument.self)
        } catch {
            throw HarborActorSystemError(.invalidInvocation, "\(target): argument as \(Argument.self): \(error)")
        }
    }

    /// Not sent: `nil`.
    public func decodeErrorType() throws -> (any Any.Type)? { nil }

    /// Not sent: `nil`.
    public func decodeReturnType() throws -> (any Any.Type)? { nil }

    /// Whether every argument was read.
    var isAtEnd: Bool { reader.isAtEnd }
}
