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
    /// To the system's own notification port, from this process: stop.
    static let stop: Int32 = 0x4841_43FF

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
