// HarborDistributed — records a call's arguments for its message.
import Distributed
import HarborCoding
import HarborPorts

/// Records a distributed call (generic substitutions, arguments) for
/// ``HarborActorSystem``; the system writes them into one message with
/// `HarborCoding` when it sends the call. The Swift runtime makes and
/// fills it; code does not use it directly.
///
/// **Thread safety:** a value with one owner.
public struct HarborInvocationEncoder: DistributedTargetInvocationEncoder {
    /// Arguments and results are `Codable` (coded by `HarborCoding`).
    public typealias SerializationRequirement = any Codable

    var generics: [String] = []
    var arguments: [any Encodable] = []

    init() {}

    /// Records a generic substitution by its mangled name.
    public mutating func recordGenericSubstitution<T>(_ type: T.Type) throws {
        guard let name = _mangledTypeName(T.self) else {
            throw HarborActorSystemError(.encodingFailed, "the type \(T.self) has no mangled name")
        }
        generics.append(name)
    }

    /// Records the next argument.
    public mutating func recordArgument<Value: Codable>(_ argument: RemoteCallArgument<Value>) throws {
        arguments.append(argument.value)
    }

    /// Records the error type (not sent: the answer names its error's
    /// type). Swift 6.3 records `any Error` here even for a function
    /// declared `throws(E)`.
    public mutating func recordErrorType<E: Error>(_ type: E.Type) throws {}

    /// Records the return type (not sent: the caller decodes the type it expects).
    public mutating func recordReturnType<R: Codable>(_ type: R.Type) throws {}

    /// Ends the recording.
    public mutating func doneRecording() throws {}

    /// The invocation message for `target`, the call numbered `number`: an
    /// ``InvocationHeader`` and the arguments, coded with `system` in the
    /// coder's `userInfo` (so local actors passed as arguments become send
    /// rights).
    func message(target: RemoteCallTarget, number: UInt64,
                 system: HarborActorSystem) throws(HarborActorSystemError) -> Message {
        try message(target: target, system: system) { writer throws(MessageCodingError) in
            try writer.append(InvocationHeader(target: target.identifier, generics: generics, number: number))
        }
    }

    /// The message of a call by number to `target` (D08), id
    /// ``ActorWire/call``: a ``CompactInvocation`` body (the header in
    /// bytes, then the arguments), the link id and the number still to be
    /// appended.
    func numberedMessage(target: RemoteCallTarget, system: HarborActorSystem) throws(HarborActorSystemError) -> Message {
        var message = try message(target: target, system: system) { _ throws(MessageCodingError) in }
        message.id = ActorWire.call
        message.content.body = try CompactInvocation.body(target: target.identifier, generics: generics,
                                                          arguments: message.content.body)
        return message
    }

    /// The arguments written after what `header` writes, in one message.
    private func message(target: RemoteCallTarget, system: HarborActorSystem,
                         header: (inout MessageValueWriter) throws(MessageCodingError) -> Void)
        throws(HarborActorSystemError) -> Message
    {
        var writer = MessageValueWriter(userInfo: system.codingUserInfo)
        do {
            try header(&writer)
            for argument in arguments { try writer.append(argument) }
            return try writer.message(id: ActorWire.invocation)
        } catch {
            throw HarborActorSystemError(.encodingFailed, "encoding a call to \(target): \(error)")
        }
    }
}
