// Harbor — a pcapng file of Harbor capture records (Docs/Capture.md, "The file").
//
// pcapng (draft-ietf-opsawg-pcapng): a Section Header Block, one Interface
// Description Block for the tapped port (link type LINKTYPE_USER0, 147,
// nanosecond timestamps through `if_tsresol`), an Enhanced Packet Block per
// record (its data a CaptureRecordFormat record, its timestamp the wall
// time of admission, `epb_dropcount` where records were dropped), and an
// Interface Statistics Block at the end with the admitted and dropped
// counts. Written little-endian, as the Section Header's byte-order magic says.
import HarborPorts

/// Writes a pcapng capture of one port's records: ``init(port:description:application:comment:)``
/// writes the file's header, ``append(_:)`` one packet per record,
/// ``finish(admitted:dropped:wallNanoseconds:)`` the closing statistics.
/// The bytes accumulate in ``output`` until ``takeOutput()`` hands them over
/// (to a file, a socket), so the writer itself does no I/O.
///
/// Any record can be written: strings are cut to what an option holds and
/// the record's own size is bounded (``CaptureRecordFormat``).
public struct PcapngWriter: Sendable {
    /// The link type of the packets: `LINKTYPE_USER0`, which Wireshark hands
    /// to the dissector registered for it (Tools/wireshark/harbor.lua).
    public static let linkType: UInt16 = 147

    /// Bytes written and not yet taken.
    public private(set) var output: [UInt8] = []
    private var firstWall: Int64?
    private var lastWall: Int64 = 0
    private var packets: UInt64 = 0

    /// Starts a capture: the section header (naming `application`, with
    /// `comment` if given) and the interface of `port`, described by
    /// `description` (a service name, say).
    public init(port: PortName, description: String? = nil, application: String = "harbor",
                comment: String? = nil) {
        var options: [UInt8] = []
        Self.appendOption(4, string: application, to: &options)           // shb_userappl
        if let comment { Self.appendOption(1, string: comment, to: &options) }  // opt_comment
        Self.appendEnd(to: &options)
        var body: [UInt8] = []
        CaptureRecordFormat.append(UInt32(0x1A2B_3C4D), to: &body)        // byte-order magic
        CaptureRecordFormat.append(UInt16(1), to: &body)                  // major version
        CaptureRecordFormat.append(UInt16(0), to: &body)                  // minor version
        CaptureRecordFormat.append(UInt64.max, to: &body)                 // section length: unknown (-1)
        body += options
        appendBlock(0x0A0D_0D0A, body: body)

        var interface: [UInt8] = []
        CaptureRecordFormat.append(Self.linkType, to: &interface)
        CaptureRecordFormat.append(UInt16(0), to: &interface)             // reserved
        CaptureRecordFormat.append(UInt32(0), to: &interface)             // snap length: none
        Self.appendOption(2, string: "harbor:\(port)", to: &interface)    // if_name
        if let description { Self.appendOption(3, string: description, to: &interface) }  // if_description
        Self.appendOption(9, value: [9], to: &interface)                  // if_tsresol: 10^-9 s
        Self.appendEnd(to: &interface)
        appendBlock(1, body: interface)
    }

    /// Writes `record` as one packet, stamped with its wall time.
    public mutating func append(_ record: PortCaptureRecord) {
        let data = CaptureRecordFormat.encode(record)
        let wall = max(0, record.wallNanoseconds)
        if firstWall == nil { firstWall = wall }
        lastWall = max(lastWall, wall)
        packets &+= 1
        var body: [UInt8] = []
        body.reserveCapacity(32 + data.count)
        CaptureRecordFormat.append(UInt32(0), to: &body)                  // interface 0
        Self.appendTimestamp(wall, to: &body)
        CaptureRecordFormat.append(UInt32(data.count), to: &body)         // captured length
        CaptureRecordFormat.append(UInt32(data.count), to: &body)         // original length
        body += data
        Self.pad(&body)
        if record.droppedBefore > 0 {
            var count: [UInt8] = []
            CaptureRecordFormat.append(record.droppedBefore, to: &count)
            Self.appendOption(4, value: count, to: &body)                 // epb_dropcount
            Self.appendEnd(to: &body)
        }
        appendBlock(6, body: body)
    }

    /// Closes the capture with an Interface Statistics Block: messages the
    /// port admitted while tapped (`isb_ifrecv`) and records dropped
    /// (`isb_ifdrop`), stamped `wallNanoseconds`, with the first and last
    /// packets' times. Packets appended afterwards would still be read.
    public mutating func finish(admitted: UInt64, dropped: UInt64, wallNanoseconds: Int64) {
        var body: [UInt8] = []
        CaptureRecordFormat.append(UInt32(0), to: &body)
        Self.appendTimestamp(max(0, wallNanoseconds), to: &body)
        var value: [UInt8] = []
        Self.appendTimestamp(firstWall ?? max(0, wallNanoseconds), to: &value)
        Self.appendOption(2, value: value, to: &body)                     // isb_starttime
        value = []
        Self.appendTimestamp(max(lastWall, max(0, wallNanoseconds)), to: &value)
        Self.appendOption(3, value: value, to: &body)                     // isb_endtime
        value = []
        CaptureRecordFormat.append(admitted, to: &value)
        Self.appendOption(4, value: value, to: &body)                     // isb_ifrecv
        value = []
        CaptureRecordFormat.append(dropped, to: &value)
        Self.appendOption(5, value: value, to: &body)                     // isb_ifdrop
        Self.appendEnd(to: &body)
        appendBlock(5, body: body)
    }

    /// Hands over the bytes written so far, leaving ``output`` empty.
    public mutating func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    /// Packets appended so far.
    public var packetCount: UInt64 { packets }

    // MARK: Blocks and options

    private mutating func appendBlock(_ type: UInt32, body: [UInt8]) {
        let length = UInt32(12 + body.count)   // body is padded to 4 already
        CaptureRecordFormat.append(type, to: &output)
        CaptureRecordFormat.append(length, to: &output)
        output += body
        CaptureRecordFormat.append(length, to: &output)
    }

    /// A timestamp in the interface's unit (nanoseconds), high word first.
    private static func appendTimestamp(_ nanoseconds: Int64, to bytes: inout [UInt8]) {
        let value = UInt64(nanoseconds)
        CaptureRecordFormat.append(UInt32(truncatingIfNeeded: value >> 32), to: &bytes)
        CaptureRecordFormat.append(UInt32(truncatingIfNeeded: value), to: &bytes)
    }

    private static func appendOption(_ code: UInt16, value: [UInt8], to bytes: inout [UInt8]) {
        let value = value.prefix(Int(UInt16.max) - 3)
        CaptureRecordFormat.append(code, to: &bytes)
        CaptureRecordFormat.append(UInt16(value.count), to: &bytes)
        bytes += value
        pad(&bytes)
    }

    /// A UTF-8 string option, cut at a character boundary to at most 1024 bytes.
    private static func appendOption(_ code: UInt16, string: String, to bytes: inout [UInt8]) {
        var utf8: [UInt8] = []
        for scalar in string.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            if utf8.count + encoded.count > 1024 { break }
            utf8 += encoded
        }
        appendOption(code, value: utf8, to: &bytes)
    }

    private static func appendEnd(to bytes: inout [UInt8]) {
        CaptureRecordFormat.append(UInt32(0), to: &bytes)                 // opt_endofopt, length 0
    }

    private static func pad(_ bytes: inout [UInt8]) {
        while bytes.count % 4 != 0 { bytes.append(0) }
    }
}
