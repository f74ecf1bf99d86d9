// Harbor — harbor-peer's commands: the message ids it serves, in one place
// for harbor-peer itself, the tests that drive it and harbor-adversary.

/// The message ids `harbor-peer` (Sources/harbor-peer) serves.
///
/// The peer receives its first message from its parent (a role in the
/// body, a send right home as right 0), makes a port of its own, sends home
/// ``hello`` carrying a send right to it, and then serves each message
/// arriving on that port by its id. A request that wants an answer carries
/// a reply right; the reply has the request's id.
public enum PeerCommand {
    /// Sent home once, first: body "pid P", right 0 a send right to the peer's port.
    public static let hello: Int32 = 100
    /// Reply with the same body.
    public static let echo: Int32 = 1
    /// Rights [x, y]: send x to y as a ``use``.
    public static let forward: Int32 = 2
    /// Rights [x]: send ``used`` "used by <pid>" on x.
    public static let use: Int32 = 3
    /// What ``use`` and ``useHeld`` send: "used by <pid>".
    public static let used: Int32 = 4
    /// Rights [receive]: destroy it, reply with its queued bodies, comma-separated.
    public static let drain: Int32 = 5
    /// Set the queue limit to the body's number, reply "stalled", stop receiving.
    public static let stall: Int32 = 6
    /// Rights [x]: keep x until exit (no reply).
    public static let hold: Int32 = 7
    /// Reply "count:sum" of the first out-of-line region, or "none".
    public static let region: Int32 = 8
    /// Drop what is held and kept, and exit 0 (no reply).
    public static let exit: Int32 = 9
    /// Send ``used`` "used by <pid>" on every held send right, reply "done".
    public static let useHeld: Int32 = 10
    /// Rights [receive]: keep it until exit, reply "kept".
    public static let keep: Int32 = 11
    /// Receive on the kept right for the body's milliseconds; reply its text (``used``), "#id", or "timeout".
    public static let receiveKept: Int32 = 12
    /// Rights [receive]: reply "text@senderPid@claimedOriginalSenderPid" (or "-") per queued message.
    public static let drainTrailers: Int32 = 13
    /// Keep a new port until exit, reply with a send-once right to it; body
    /// "cgroups": the port reads its senders' cgroups (SO_PASSPIDFD on its
    /// connections, X22).
    public static let keepNew: Int32 = 14
    /// Send home the body's number of messages, ids 0..<n, body "i", then reply "sent".
    public static let burst: Int32 = 15
    /// ``receiveKept``, through a port set holding the kept right.
    public static let receiveKeptInSet: Int32 = 16
    /// A HarborCoding body { note, reportTo: send, inbox: receive, answer:
    /// send-once, payload: region }: receive two messages on inbox, send
    /// ``used`` on reportTo, answer through answer with a coded report
    /// { pid, note, received, regionCount, regionSum } (C03).
    public static let coded: Int32 = 17
    /// A HarborCoding body { note, reportTo: send, inbox: receive, output:
    /// file, answer: send-once }: write "written by <pid>" to output, receive
    /// one message on inbox, send ``used`` on reportTo, answer through answer
    /// with a coded report { pid, received } (C07).
    public static let codedFile: Int32 = 18
    /// Rights [receive]: write each queued message's text to each file it
    /// carries, reply "written=N" (files written through) (C07).
    public static let drainFiles: Int32 = 19
    /// Rights [x]: send x the message ``sendToBody(id:body:)`` describes
    /// (no reply right), reply "sent" (or the error).
    public static let sendTo: Int32 = 20
    /// Reply with the kept receive right (moved home), "gave"; "none" without one.
    public static let giveKept: Int32 = 21

    /// A ``sendTo`` body: `id` little-endian, then `body`.
    public static func sendToBody(id: Int32, body: [UInt8]) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: UInt32(bitPattern: id) >> (8 * UInt32($0))) } + body
    }

    /// Reply "key=value ...": the port's status and `WireRejections` by reason.
    public static let stats: Int32 = 40
    /// Reply with a new send right to the peer's port (a connection of its own).
    public static let grant: Int32 = 41
    /// Reply "uid=U pid=P": the request's `trailer.sender`.
    public static let whoami: Int32 = 42

    // P12 misbehaviour (Sources/harbor-peer/Misbehaviour.swift), on right 0
    // of the request (a send right) or else on home; each replies with what
    // it did ("sent=N", "taken=N", "written", ...).

    /// Body "n": n counted raw messages, no slot taken.
    public static let rawFlood: Int32 = 50
    /// Body "n": n wait packets, a fresh eventfd each.
    public static let rawWaits: Int32 = 51
    /// Body "declared sent": a fragmented message never finished.
    public static let rawFragment: Int32 = 52
    /// Body full|full-loop|hoard|room|magic: write the slot counter the right maps.
    public static let scribble: Int32 = 53
    /// Body "count bytes": messages with one sparse sealed region each.
    public static let regions: Int32 = 54
    /// Body "messages copies": messages with copies of one send right.
    public static let rights: Int32 = 55
    /// Body "bytes": one `Message(id:payload:)` of that size.
    public static let payload: Int32 = 56
    /// Body "messages files": messages with that many pipe ends each (C07).
    public static let files: Int32 = 57
    /// The misbehaviour commands, ``rawFlood`` through ``files``.
    public static let misbehaviour: ClosedRange<Int32> = rawFlood...files

    /// Body "n": set RLIMIT_NOFILE so that n more descriptors fit, reply "limit=L".
    public static let limitFiles: Int32 = 60
    /// Reply how many packets were refused for truncated control data.
    public static let truncations: Int32 = 61
}
