// HarborDistributed — the message ids of calls and their answers.
import HarborPorts

/// The message ids a ``HarborActorSystem`` sends (`Docs/Distributed.md`).
/// Bodies are `HarborCoding` values.
enum ActorWire {
    /// A call, to the actor's port, with a send-once reply right. Body: an
    /// array (`MessageValueWriter`): an ``InvocationHeader``, then the
    /// arguments in order.
    static let invocation: Int32 = 0x4841_4301
    /// The function returned a value. Body: the value.
    static let returned: Int32 = 0x4841_4302
    /// The function returned nothing. Body: empty.
    static let returnedVoid: Int32 = 0x4841_4303
    /// The function threw. Body: an array: a ``ThrownHeader``, then the
    /// error itself when it is `Encodable`.
    static let threw: Int32 = 0x4841_4304
    /// The call failed in the system. Text: `code TAB detail`.
    static let failed: Int32 = 0x4841_4305
    /// A call by number (D08), to the actor's port, without a reply right.
    /// Body: as ``invocation``'s, then the caller's link id and the call's
    /// number, 8 bytes each, little-endian. The answer goes through the
    /// send right to the caller's reply port the callee keeps for that
    /// link (one ``introducingCall`` handed it over), its body ending with
    /// the number.
    static let call: Int32 = 0x4841_4306
    /// A call by number that hands over the reply port: as ``call``, and
    /// its last carried right is a send right to the caller's reply port
    /// for the link, kept only if it leads into the calling process.
    static let introducingCall: Int32 = 0x4841_4307
    /// To the actor's port, from the calling process: cancel that process's
    /// call of this number (D11), still running. Body: the number, 8
    /// bytes, little-endian (``InvocationHeader/number``). No answer: the
    /// call itself answers, once. Ignored unless a call of that number
    /// from the sending process (as the kernel says) is running.
    static let cancel: Int32 = 0x4841_4308
    /// To the system's own notification port, from this process: a job
    /// was queued on the system's thread (`SystemExecutor`).
    static let wake: Int32 = 0x4841_43FE
    /// To the system's own notification port, from this process: stop.
    static let stop: Int32 = 0x4841_43FF

    /// The bytes a link id or a call number adds at the end of a body.
    static let numberSize = 8

    /// Appends `number` to `message`'s body (little-endian).
    static func append(_ number: UInt64, to message: inout Message) {
        withUnsafeBytes(of: number.littleEndian) { message.content.body.append(contentsOf: $0) }
    }

    /// Takes a number off the end of `message`'s body; nil if the body is
    /// shorter than one.
    static func takeNumber(from message: inout Message) -> UInt64? {
        let count = message.content.body.count
        guard count >= numberSize else { return nil }
        var number: UInt64 = 0
        for index in (count - numberSize)..<count {
            number = number >> 8 | UInt64(message.content.body[index]) << 56
        }
        message.content.body.removeLast(numberSize)
        return number
    }

    /// Whether `id` is one of the answers (to a call by number or not).
    static func isAnswer(_ id: Int32) -> Bool {
        id == returned || id == returnedVoid || id == threw || id == failed
    }

    /// The longest detail a failure answer is read with.
    static let maximumDetail = 512

    /// The failure answer for `error`.
    static func failure(_ error: HarborActorSystemError) -> Message {
        Message(id: failed, text: "\(error.code)\t\(error.detail.prefix(maximumDetail))")
    }

    /// A failure answer's text as the error it names (an unknown code is an
    /// ``HarborActorSystemError/Code/invalidReply``).
    static func error(fromFailure text: String) -> HarborActorSystemError {
        let parts = text.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
        let detail = String((parts.count > 1 ? parts[1] : Substring(text)).prefix(maximumDetail))
        guard let name = parts.first, let code = HarborActorSystemError.Code(named: String(name)) else {
            return HarborActorSystemError(.invalidReply, "a failure answer with an unknown code: \(detail)")
        }
        return HarborActorSystemError(code, detail)
    }
}
