// Harbor — an open file as a Codable field: carried as a real descriptor, taken once.
import HarborPorts
import HarborSystem
import SystemPackage

/// Holds an open file (a pipe, a socket, a regular file, an eventfd, any
/// descriptor) so that it can be a field of a Codable value, carried in the
/// message as a real descriptor (`SCM_RIGHTS` across processes), never as
/// bytes.
///
/// Why a carrier and not `FileDescriptor` itself: a `FileDescriptor` is a
/// number that says nothing about who closes it. The carrier owns its
/// descriptor: it closes it when its last reference goes, unless someone
/// took it out with ``take()``, once; a second ``take()`` throws
/// ``MessageCodingError/Code/rightAlreadyTaken`` instead of handing out a
/// descriptor twice.
///
/// ```swift
/// struct OpenLog: Codable { var name: String; var output: FileDescriptorCarrier }
/// let message = try MessageEncoder().encode(
///     OpenLog(name: "audit", output: FileDescriptorCarrier(duplicating: pipe.writeEnd)), id: 1)
/// // … on the other side:
/// let output = try MessageDecoder().decode(OpenLog.self, from: received).output.take()
/// defer { try? output.close() }
/// ```
///
/// Encoding puts a duplicate of the carrier's descriptor in the message
/// (the carrier keeps its own, as a `SendRight` field is copied); the
/// message owns that duplicate and closes it if nobody takes it. Decoding
/// makes a new carrier holding the descriptor the message carried. Only
/// ``MessageEncoder`` and ``MessageDecoder`` can code a carrier; another
/// coder (JSON) gets a typed error (C06).
///
/// **Thread safety:** any thread; one ``take()`` wins.
public final class FileDescriptorCarrier: Codable, Sendable {
    private let file: HarborLock<CarriedFile?>

    /// Carries `descriptor`, which the carrier now owns and closes.
    public init(taking descriptor: FileDescriptor) {
        file = HarborLock(CarriedFile(SharedDescriptor(taking: descriptor.rawValue)))
    }

    /// Carries a duplicate (close-on-exec) of `descriptor`, which stays yours.
    /// - Throws: a `PortError` when it cannot be duplicated (`EBADF`, `EMFILE`).
    public init(duplicating descriptor: FileDescriptor) throws(PortError) {
        let copy: CInt
        do { copy = try DescriptorIO.duplicate(descriptor.rawValue) } catch {
            throw PortError(error, "duplicating descriptor \(descriptor.rawValue)")
        }
        file = HarborLock(CarriedFile(SharedDescriptor(taking: copy)))
    }

    init(file: CarriedFile) { self.file = HarborLock(file) }

    /// Takes the descriptor out: yours to use and close.
    /// - Throws: ``MessageCodingError/Code/rightAlreadyTaken`` if it was
    ///   taken before; ``MessageCodingError/Code/invalidValue`` wrapping the
    ///   system error when no descriptor is left to hand it out with (the
    ///   carrier then keeps it).
    public func take() throws(MessageCodingError) -> FileDescriptor {
        FileDescriptor(rawValue: try duplicate(emptying: true, path: []))
    }

    /// Whether the descriptor was taken out.
    public var isTaken: Bool { file.withLockedValue { $0 == nil } }

    /// Encodes the descriptor as an index into the message's carried files;
    /// the message gets a duplicate of its own.
    /// - Throws: ``MessageCodingError`` unless the encoder is a
    ///   ``MessageEncoder``'s, or when the carrier's descriptor was taken.
    public func encode(to encoder: any Encoder) throws {
        let body = try BodyEncoder.of(encoder, encoding: "a file descriptor")
        let copy = try duplicate(emptying: false, path: body.codingPath)
        body.writeCarried(.file, index: try body.state.add(CarriedFile(SharedDescriptor(taking: copy)), path: body.codingPath))
    }

    /// A duplicate of the held descriptor, made under the lock (so a
    /// concurrent ``take()`` cannot close it meanwhile); `emptying` drops
    /// the carrier's own once the duplicate exists.
    private func duplicate(emptying: Bool, path: [any CodingKey]) throws(MessageCodingError) -> CInt {
        let outcome = file.withLockedValue { (held: inout CarriedFile?) -> Result<CInt, SystemError>? in
            guard let carried = held else { return nil }
            do throws(SystemError) {
                let copy = try DescriptorIO.duplicate(carried.descriptor.rawValue)
                if emptying { held = nil }
                return .success(copy)
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case nil:
            throw MessageCodingError(.rightAlreadyTaken, "the carrier's file descriptor was already taken",
                                     codingPath: path)
        case .failure(let error)?:
            throw MessageCodingError(.invalidValue, "duplicating the carried descriptor: \(error)", codingPath: path)
        case .success(let copy)?:
            return copy
        }
    }

    /// Takes the file the body names out of the message.
    /// - Throws: ``MessageCodingError`` unless the decoder is a ``MessageDecoder``'s.
    public convenience init(from decoder: any Decoder) throws {
        let body = try BodyDecoder.of(decoder, decoding: "a file descriptor")
        self.init(file: try body.state.takeFile(body.node, path: body.codingPath))
    }
}
