// harbor-adversary — options in, one line of results out.
import CHarborLinux
import Glibc
import HarborPeerCommands

/// The command line: `harbor-adversary ATTACK [--target service|harbord]
/// [--socket PATH] [--out FILE] [--count N] [--hold SECONDS] [--name NAME]
/// [--guesses N] [--vouch true]`.
struct Options {
    var attack = ""
    var target = Target.Kind.service
    var socketPath: String?
    var out: String?
    var count: Int?
    var hold: Double = 0
    var name = "root.secret"
    var guesses = 24
    /// `forge-send`: each forged right vouches for the victim port's real
    /// slot counter file (entry flag `vouched`).
    var vouch = false

    init(_ arguments: [String]) {
        var rest = arguments[...]
        attack = rest.popFirst() ?? ""
        while let option = rest.popFirst() {
            let value = rest.popFirst() ?? ""
            switch option {
            case "--target": target = Target.Kind(rawValue: value) ?? .service
            case "--socket": socketPath = value
            case "--out": out = value
            case "--count": count = Int(value)
            case "--hold": hold = Double(value) ?? 0
            case "--name": name = value
            case "--guesses": guesses = Int(value) ?? guesses
            case "--vouch": vouch = value == "true"
            default: Report.fail("unknown option \(option)")
            }
        }
    }

    /// Sleeps for `--hold` (the test measures the victim meanwhile).
    func holdOn() {
        if hold > 0 { usleep(UInt32(min(hold, 600) * 1_000_000)) }
    }
}

/// The adversary's findings: `key=value` pairs, printed as one line on
/// stdout and written to `--out` (the test reads that file).
final class Report {
    nonisolated(unsafe) static var out: String?
    private var fields: [(String, String)] = []

    init(_ attack: String, target: Target.Kind) {
        set("attack", attack)
        set("target", target.rawValue)
        set("pid", Int(getpid()))
        set("uid", Int(getuid()))
    }

    func set(_ key: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.0 == key }) {
            fields[index].1 = value
        } else {
            fields.append((key, value))
        }
    }

    func set(_ key: String, _ value: Int) { set(key, String(value)) }

    func set(_ key: String, _ value: Bool) { set(key, value ? 1 : 0) }

    var line: String { fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ") }

    /// Writes the line to `--out`, else prints it (before any self-inflicted
    /// death too).
    func emit() {
        var bytes = Array((line + "\n").utf8)
        guard let path = Self.out else {
            _ = bytes.withUnsafeMutableBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            return
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    static func fail(_ reason: String) -> Never {
        let report = Report("error", target: .service)
        report.set("error", oneWord(reason))
        report.emit()
        exit(2)
    }
}

/// `text` with its spaces as underscores, to stay one `key=value` word.
func oneWord(_ text: String) -> String { String(text.map { $0 == " " ? "_" : $0 }) }

/// Sizes and ids the attacks use.
enum Protocol {
    enum Bootstrap {
        static let lookUp: Int32 = 0x4842_0001
        static let checkIn: Int32 = 0x4842_0002
        static let register: Int32 = 0x4842_0003
        static let unregister: Int32 = 0x4842_0004
        static let list: Int32 = 0x4842_0005
    }


    /// An id neither victim knows: the message is dropped after decoding.
    static let unknown: Int32 = 0x7FFF_0001

    /// A request the victim answers, for "does it still serve": a listing
    /// (harbord) or an echo (a service).
    static func ping(_ target: Target) -> Answer {
        switch target.kind {
        case .harbord: target.request(id: Bootstrap.list, timeout: .seconds(5))
        case .service: target.request(id: PeerCommand.echo, body: Array("ping".utf8), timeout: .seconds(5))
        }
    }
}

/// A slot counter memfd of the adversary's own, laid out and sealed like a
/// real one, so a right carrying it passes every check on the descriptor.
func ownSlotCounter(free: Int32 = 5) -> CInt {
    let fd = RawIO.memoryFile(size: SlotCounter.size, seals: 0)
    guard fd >= 0 else { Report.fail("memfd") }
    var page = [Int32](repeating: 0, count: SlotCounter.size / 4)
    page[0] = SlotCounter.magic
    page[17] = free
    page[32] = free
    _ = page.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    _ = fcntl(fd, charbor_F_ADD_SEALS, charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL)
    return fd
}
