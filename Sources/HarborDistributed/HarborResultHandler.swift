// HarborDistributed — answers a call through its reply right, or by number.
import Distributed
import HarborCoding
import HarborPorts
import HarborSystem

/// Answers one received call: the function's value, its return, or its
/// thrown error, through the call's reply right, exactly once. The Swift
/// runtime calls it while ``HarborActorSystem`` executes the call; code
/// does not use it directly.
///
/// A thrown error is sent with its type's name and description, and
/// itself when it is `Encodable` (`Docs/Distributed.md`).
///
/// **Thread safety:** any thread; the first answer wins.
public final class HarborResultHandler: DistributedTargetInvocationResultHandler, Sendable {
    /// Arguments and results are `Codable` (coded by `HarborCoding`).
    public typealias SerializationRequirement = any Codable

    /// Where the answer goes, until it went.
    private let route: HarborLock<CallRoute?>
    private let system: HarborActorSystem
    /// Gives the call's share of running calls back: once, as it answers
    /// (or when the handler goes unanswered).
    private let release: HarborLock<(@Sendable () -> Void)?>

    init(route: consuming CallRoute, system: HarborActorSystem, release: (@Sendable () -> Void)? = nil) {
        self.route = HarborLock(Optional(route))
        self.system = system
        self.release = HarborLock(release)
    }

    deinit {
        release.withLock { $0.take() }?()
        // A send-once reply right dropped unanswered tells its caller by
        // itself (a send-once notification); a call by number is told.
        route.withLock { $0.take() }?.endUnanswered()
    }

    /// Answers with `value`; a value that cannot be encoded answers
    /// ``HarborActorSystemError/Code/encodingFailed``.
    public func onReturn<Success: Codable>(value: Success) async throws {
        var encoder = MessageEncoder()
        encoder.userInfo = system.codingUserInfo
        do {
            answer(try encoder.encode(value, id: ActorWire.returned))
        } catch {
            fail(HarborActorSystemError(.encodingFailed, "encoding the result, \(Success.self): \(error)"))
        }
    }

    /// Answers that the function returned.
    public func onReturnVoid() async throws {
        answer(Message(id: ActorWire.returnedVoid))
    }

    /// Answers with the thrown error: its type's names, its description,
    /// and the error itself when it is `Encodable` and encodes.
    public func onThrow<Err: Error>(error: Err) async throws {
        let thrown: any Error = error
        // The runtime hands the system's own failures here too (an argument
        // that did not decode, a target it could not find): answered as
        // failures, so the caller gets the same code.
        if let failure = thrown as? HarborActorSystemError {
            fail(failure)
            return
        }
        // A function that ended because its call was cancelled (D11).
        if thrown is CancellationError {
            fail(HarborActorSystemError(.cancelled, "the remote function threw CancellationError"))
            return
        }
        if let failure = thrown as? ExecuteDistributedTargetError {
            fail(HarborActorSystemError(failure.errorCode == .targetAccessorNotFound ? .unknownTarget : .invalidInvocation,
                                        failure.message))
            return
        }
        let type = Swift.type(of: thrown)
        let header = ThrownHeader(type: _mangledTypeName(type) ?? _typeName(type), typeName: _typeName(type),
                                  description: String(String(describing: thrown).prefix(ActorWire.maximumDetail)),
                                  hasValue: thrown is any Encodable)
        if let encodable = thrown as? any Encodable, let message = try? Self.message(header, encodable, system.codingUserInfo) {
            answer(message)
            return
        }
        var plain = header
        plain.hasValue = false
        do {
            answer(try Self.message(plain, nil, system.codingUserInfo))
        } catch {
            fail(HarborActorSystemError(.remoteError, header.description))
        }
    }

    private static func message(_ header: ThrownHeader, _ value: (any Encodable)?,
                                _ userInfo: [CodingUserInfoKey: any Sendable]) throws(MessageCodingError) -> Message {
        var writer = MessageValueWriter(userInfo: userInfo)
        try writer.append(header)
        if let value { try writer.append(value) }
        return try writer.message(id: ActorWire.threw)
    }

    /// Answers with a system failure (when nothing answered yet).
    func fail(_ error: HarborActorSystemError) {
        answer(ActorWire.failure(error))
    }

    /// Whether an answer went (or was attempted).
    var hasAnswered: Bool {
        route.withLock { route -> Bool in
            switch route {
            case .none: true
            case .some: false
            }
        }
    }

    /// Sends `message` the call's way, if it was not answered yet. A
    /// caller that is gone is no one's failure: the answer is dropped.
    private func answer(_ message: consuming Message) {
        guard let route = route.withLock({ $0.take() }) else { return }
        // Given back before the answer goes, so a caller that calls again
        // as soon as it has the answer finds its share free.
        release.withLock { $0.take() }?()
        route.send(message)
    }
}
