// Harbor — file descriptors carried in a message (C07): any open file, as
// itself, owned by the message until taken out.
import SystemPackage
import HarborSystem

extension Message {
    /// The most file descriptors one message may carry. With the rights
    /// (two descriptors per send right), regions and reply right besides,
    /// a message stays under the kernel's 253 descriptors per `SCM_RIGHTS`.
    public static let maximumCarriedFiles = 32

    /// Attaches an open file: a pipe, a socket, a regular file, an
    /// eventfd, any descriptor this process holds. The message holds its
    /// own duplicate (close-on-exec); `descriptor` stays yours to use and
    /// close. Another process receives the open file itself through
    /// `SCM_RIGHTS`, never its bytes; in this process the message's
    /// duplicate travels with it.
    ///
    /// Whoever receives the message takes it out with
    /// ``takeFileDescriptor(at:)``; one nobody takes is closed when the
    /// message is dropped. While queued in another process it counts as one
    /// descriptor of the sender's uid (Docs/Security.md, "Whoever asks pays").
    ///
    /// ```swift
    /// var message = Message(id: 1, text: "log here")
    /// try message.attach(logPipe.writeEnd)
    /// try service.send(message)
    /// ```
    ///
    /// **Mach equivalent:** none; on Darwin a descriptor travels as a
    /// fileport (`fileport_makeport`) in a send right.
    /// - Throws: ``PortError/Code/messageTooLarge`` beyond
    ///   ``maximumCarriedFiles``; a system error (`EBADF`, `EMFILE`) when
    ///   the descriptor cannot be duplicated.
    public mutating func attach(_ descriptor: FileDescriptor) throws(PortError) {
        guard content.files.count < Message.maximumCarriedFiles else {
            throw PortError(.messageTooLarge, "more than \(Message.maximumCarriedFiles) carried files")
        }
        content.files.append(CarriedFile(SharedDescriptor(taking: try Self.duplicate(descriptor.rawValue))))
    }

    /// How many file descriptors the message carries, taken ones included
    /// (indices never move).
    public var carriedFileCount: Int { content.files.count }

    /// Whether the file at `index` was taken out already.
    public func isFileTaken(at index: Int) -> Bool {
        content.files.indices.contains(index) && content.files[index] == nil
    }

    /// Takes the file at `index` out of the message: a new descriptor
    /// (close-on-exec) for the same open file, yours to close. Once taken,
    /// the message no longer holds it.
    /// - Throws: ``PortError/Code/invalidArgument`` when there is no file at
    ///   `index` or it was taken; a system error when it cannot be duplicated
    ///   (the file then stays in the message).
    public mutating func takeFileDescriptor(at index: Int) throws(PortError) -> FileDescriptor {
        guard content.files.indices.contains(index), let file = content.files[index] else {
            throw PortError(.invalidArgument, "no carried file at index \(index) (the message carries "
                            + "\(content.files.count), taken ones included)")
        }
        let copy = try Self.duplicate(file.descriptor.rawValue)
        content.files[index] = nil
        // The message's own descriptor closes with `file`; the caller owns the copy.
        return FileDescriptor(rawValue: copy)
    }

    /// The carried file at `index`, taken out as the runtime holds it; nil
    /// if absent or taken (HarborCoding's decoder).
    package mutating func takeCarriedFile(at index: Int) -> CarriedFile? {
        guard content.files.indices.contains(index), let file = content.files[index] else { return nil }
        content.files[index] = nil
        return file
    }

    /// A close-on-exec duplicate of `raw`, owned by the caller.
    private static func duplicate(_ raw: CInt) throws(PortError) -> CInt {
        do { return try DescriptorIO.duplicate(raw) } catch { throw PortError(error, "duplicating descriptor \(raw)") }
    }
}

extension MessageContent {
    /// The files still carried (not taken out).
    package var carriedFileCount: Int {
        guard !isPlain else { return 0 }
        return files.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
    }
}
