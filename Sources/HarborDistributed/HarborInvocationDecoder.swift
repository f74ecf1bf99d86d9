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

    init(reader: consuming MessageValueReader, header: InvocationHeader) {
        self.reader = reader
        generics = header.generics
        target = header.target
    }

    /// The generic substitutions, looked up by their mangled names.
    /// - Throws: ``HarborActorSystemError/Code/invalidInvocation`` for a
    ///   name no type in this process has.
    public func decodeGenericSubstitutions() throws -> [any Any.Type] {
        try generics.map { name in
            guard let type = _typeByName(name) else {
                throw HarborActorSystemError(.invalidInvocation, "\(target): no type here is named \(name)")
            }
            return type
        }
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
