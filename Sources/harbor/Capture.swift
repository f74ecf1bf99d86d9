// Harbor — `harbor capture`: a name's traffic into a pcapng file for Wireshark (busctl capture).
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborCapture
import HarborPorts

struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Write each message a name's port admits to a pcapng file (like busctl capture).",
        discussion: """
            Reaches the name's holder as `harbor monitor` does (root, or the uid holding the name) and \
            writes its records as pcapng (Docs/Capture.md): one packet a message, with up to \
            --body-prefix bytes of its body, for Wireshark or tshark with Tools/wireshark/harbor.lua. \
            Prints `harbor: capturing NAME pid PID port PORT to FILE` on stderr once tapped. The \
            file is written as records arrive, so a capture cut short still reads; it ends with \
            the counts of messages admitted and dropped. -w - writes to stdout. Prints `harbor: captured N \
            messages of NAME to FILE` on stderr at the end. Stops after --count messages, after \
            --seconds, on SIGINT, SIGTERM or SIGHUP, or when the name's port dies. \
            With --json: that end line as one object on stdout {"name", "pid", "port", "file", \
            "packets", "admitted", "dropped"} (Docs/schemas/harbor-capture.schema.json; not with -w -). \
            Exit status 0 stopped, 1 the file cannot be written, 2 no such name (or not held by a \
            running process), 3 name server unreachable (or the holder died), 4 no answer in time \
            (or the holder forwards to as many monitors as it allows), 5 not permitted.
            """)

    @OptionGroup var target: MonitorOptions
    @Option(name: .short, help: ArgumentHelp("The pcapng file to write (- for stdout).", valueName: "file"))
    var write: String
    @Option(name: .long, help: ArgumentHelp("Body bytes to keep a message (at most 4096).", valueName: "bytes"))
    var bodyPrefix: Int = 256
    @Flag(name: .long, help: "Print the end line as one JSON object (Docs/schemas/harbor-capture.schema.json).")
    var json = false
    @OptionGroup var connection: ConnectionOptions

    private var name: String { target.name }

    func validate() throws {
        guard (0...4096).contains(bodyPrefix) else { throw ValidationError("--body-prefix must be between 0 and 4096") }
        if json && write == "-" { throw ValidationError("--json prints to stdout: write the capture to a file") }
    }

    func run() throws {
        let client = try connection.connect()
        // The holder first: a refused capture leaves no file behind. A file
        // that cannot be made then ends the stream (the holder stops
        // forwarding when the stream's port goes).
        let stream = try target.stream(bodyPrefix: bodyPrefix, client: client)
        let file: CInt
        if write == "-" {
            file = 1
        } else {
            file = open(write, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard file >= 0 else { throw CommandFailure("\(write): \(String(cString: strerror(errno)))", code: 1) }
        }
        defer { if file != 1 { close(file) } }
        var writer = PcapngWriter(port: PortName(rawValue: stream.port), description: name,
                                  comment: "harbor capture \(name): pid \(stream.pid)")
        try Self.drain(&writer, to: file, path: write)
        printError("capturing \(name) pid \(stream.pid) port \(stream.port) to \(write)")
        let summary = try stream.run(count: target.count, seconds: target.seconds) { (record) throws(CommandFailure) in
            writer.append(record)
            try Self.drain(&writer, to: file, path: write)
        }
        let packets = writer.packetCount
        writer.finish(admitted: summary?.admitted ?? packets, dropped: summary?.dropped ?? 0,
                      wallNanoseconds: Self.now())
        try Self.drain(&writer, to: file, path: write)
        if json {
            say(JSONText.object([
                ("name", JSONText.string(name)), ("pid", String(stream.pid)), ("port", String(stream.port)),
                ("file", JSONText.string(write)), ("packets", String(packets)),
                ("admitted", summary.map { String($0.admitted) } ?? "null"),
                ("dropped", summary.map { String($0.dropped) } ?? "null"),
            ]))
        } else {
            printError("captured \(packets) message\(packets == 1 ? "" : "s") of \(name) to \(write)")
        }
    }

    /// The wall clock, nanoseconds since the Unix epoch (the statistics block's time).
    private static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Writes what the writer holds to `file`, all of it.
    private static func drain(_ writer: inout PcapngWriter, to file: CInt, path: String) throws(CommandFailure) {
        let bytes = writer.takeOutput()
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw CommandFailure("\(path): \(String(cString: strerror(errno)))", code: 1)
            }
            offset += written
        }
    }
}
