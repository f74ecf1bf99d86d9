// Harbor — what one encoding collects besides the body: rights and regions.
import HarborPorts

/// The carried rights and out-of-line regions of the message being
/// encoded, in the order the value's fields name them, and the body as it
/// is streamed (``BodyStream``); shared by every encoder and container of
/// one ``MessageEncoder/encode(_:id:)`` call (one thread's, for the length
/// of the call: `@exclusivity(unchecked)` spares the runtime's access
/// checks on the stream, written at every value).
///
/// A carrier's right (receive, send-once) stays in its carrier until the
/// whole value has encoded; only then are they all moved into the message,
/// so a failed encoding leaves every carrier as it was.
final class EncodingState {
    private let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    /// ``userInfo``, made the first time a value asks for it.
    private var anyUserInfo: [CodingUserInfoKey: Any]?
    @exclusivity(unchecked) private(set) var rights: [CarriedRight] = []
    @exclusivity(unchecked) private(set) var regions: [MappedRegion] = []
    /// Carried files: the message's own duplicates, closed with this state
    /// if the encoding fails.
    @exclusivity(unchecked) private(set) var files: [CarriedFile?] = []
    @exclusivity(unchecked) private var carriers: [(index: Int, carrier: any RightCarrier)] = []
    /// The body, written as the value encodes.
    @exclusivity(unchecked) var stream: BodyStream

    /// A state whose stream writes `writer`'s bytes, its values in `outerDepth` containers already.
    init(userInfo: [CodingUserInfoKey: any Sendable], writer: BodyWriter = BodyWriter(), outerDepth: Int = 0) {
        sendableUserInfo = userInfo
        stream = BodyStream(writer: writer, outerDepth: outerDepth)
    }

    /// How many rights, regions, files and carriers were added so far:
    /// where a value's own begin.
    var mark: (rights: Int, regions: Int, files: Int, carriers: Int) {
        (rights.count, regions.count, files.count, carriers.count)
    }

    /// Forgets the rights, regions, files and carriers added since `mark`
    /// (a value about to be encoded again): their references are released,
    /// the files closed, the carriers' rights left in them.
    func rollBack(to mark: (rights: Int, regions: Int, files: Int, carriers: Int)) {
        rights.removeSubrange(mark.rights...)
        regions.removeSubrange(mark.regions...)
        files.removeSubrange(mark.files...)
        carriers.removeSubrange(mark.carriers...)
    }

    /// The encoder's `userInfo`: the one the encoding was given, converted
    /// once, when a value first asks (most never do).
    var userInfo: [CodingUserInfoKey: Any] {
        if let anyUserInfo { return anyUserInfo }
        let converted: [CodingUserInfoKey: Any] = sendableUserInfo
        anyUserInfo = converted
        return converted
    }

    /// Adds a send right; its index.
    func add(_ right: SendRight, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> Int {
        try reserveRight(path: path())
        rights.append(.send(right.token))
        return rights.count - 1
    }

    /// Adds a carrier's right, to be taken when the encoding succeeds; its index.
    func add(_ carrier: any RightCarrier, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> Int {
        guard !carrier.isTaken else {
            throw MessageCodingError(.rightAlreadyTaken, "the carrier's \(carrier.kindName) was already taken",
                                     codingPath: path())
        }
        guard !carriers.contains(where: { $0.carrier === carrier }) else {
            throw MessageCodingError(.rightAlreadyTaken, "one carrier's \(carrier.kindName) appears twice in the value",
                                     codingPath: path())
        }
        try reserveRight(path: path())
        rights.append(.taken)
        carriers.append((rights.count - 1, carrier))
        return rights.count - 1
    }

    /// Adds an out-of-line region; its index.
    func add(_ region: MappedRegion, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> Int {
        guard regions.count < MessageCodingFormat.maximumRegions else {
            throw MessageCodingError(.limitExceeded, "more than \(MessageCodingFormat.maximumRegions) out-of-line regions",
                                     codingPath: path())
        }
        regions.append(region)
        return regions.count - 1
    }

    /// Adds a carried file (a duplicate the message will own); its index.
    func add(_ file: CarriedFile, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> Int {
        guard files.count < MessageCodingFormat.maximumFiles else {
            throw MessageCodingError(.limitExceeded, "more than \(MessageCodingFormat.maximumFiles) carried files",
                                     codingPath: path())
        }
        files.append(file)
        return files.count - 1
    }

    private func reserveRight(path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) {
        guard rights.count < MessageCodingFormat.maximumRights else {
            throw MessageCodingError(.limitExceeded, "more than \(MessageCodingFormat.maximumRights) carried rights",
                                     codingPath: path())
        }
    }

    /// Moves every carrier's right into ``rights``; if one was taken
    /// meanwhile (another thread), puts back those already moved and throws.
    func takeCarriedRights() throws(MessageCodingError) {
        if carriers.isEmpty { return }
        for (position, entry) in carriers.enumerated() {
            guard let right = entry.carrier.takeCarried() else {
                for earlier in carriers[..<position] {
                    earlier.carrier.restore(rights[earlier.index])
                    rights[earlier.index] = .taken
                }
                throw MessageCodingError(.rightAlreadyTaken,
                                         "a carrier's \(entry.carrier.kindName) was taken while the value encoded")
            }
            rights[entry.index] = right
        }
    }
}
