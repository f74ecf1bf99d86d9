// Harbor — the policy file: names declared ahead of their services, and names shared across users.
import Glibc  // types only: uid_t
import HarborPorts
import HarborSystem

/// The name server's policy: the names it creates at start-up.
///
/// One declaration a line (Docs/Bootstrap.md):
///
/// ```
/// # comment
/// shared  NAME owner=UID [unit=UNIT]   # one name every uid can look up; only UID checks in
/// declare NAME user=UID  [unit=UNIT]   # a name in UID's own scope, waiting for its service
/// ```
///
/// The text is parsed as hostile input: size, line length, counts, names,
/// uids and unit names are all checked, and every problem is reported with
/// its line number. Nothing is applied unless the whole file is valid.
///
/// **Darwin equivalent:** the `MachServices` dictionary of a launchd plist.
public struct BootstrapPolicy: Sendable, Hashable {
    /// One declared name.
    public struct Declaration: Sendable, Hashable {
        /// The service name.
        public let name: String
        /// Shared (every uid sees it; `owner` checks in) or in `owner`'s scope only.
        public let isShared: Bool
        /// The uid that may check it in (and, unless shared, the only one who sees it).
        public let owner: uid_t
        /// The systemd unit a look-up starts while the service is not checked in.
        public let unit: String?
        /// Where it was declared (1-based).
        public let line: Int
    }

    /// The declarations, in file order.
    public let declarations: [Declaration]

    /// Largest policy file accepted.
    public static let maximumSize = 1 << 20
    /// Longest line accepted.
    public static let maximumLineLength = 1024
    /// Most declarations accepted.
    public static let maximumDeclarations = 10_000

    /// No declarations.
    public init() { declarations = [] }

    /// Reads and parses the file at `path`.
    /// - Throws: ``BootstrapPolicyError`` naming the file and each bad line.
    public init(contentsOf path: String) throws(BootstrapPolicyError) {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.contents(of: path, readingAtMost: Self.maximumSize)
        } catch {
            throw BootstrapPolicyError(file: path, problems: [(0, "cannot read the file: \(SystemError.reason(error.code))")])
        }
        try self.init(parsing: bytes, file: path)
    }

    /// Parses policy text (UTF-8 bytes); `file` names it in errors.
    /// - Throws: ``BootstrapPolicyError`` listing each bad line (at most 20).
    public init(parsing bytes: [UInt8], file: String = "policy") throws(BootstrapPolicyError) {
        var problems: [(Int, String)] = []
        var declarations: [Declaration] = []
        var seen: [String: Int] = [:]
        if bytes.count > Self.maximumSize {
            throw BootstrapPolicyError(file: file, problems: [(0, "larger than \(Self.maximumSize) bytes")])
        }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            if problems.count >= 20 { break }
            if raw.count > Self.maximumLineLength {
                problems.append((number, "line longer than \(Self.maximumLineLength) bytes"))
                continue
            }
            guard let text = String(validating: raw, as: UTF8.self), !text.contains("\0") else {
                problems.append((number, "not UTF-8 text"))
                continue
            }
            let content = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let keyword = words.first else { continue }
            switch Self.declaration(keyword, Array(words.dropFirst()), line: number) {
            case .failure(let problem):
                problems.append((number, problem.message))
            case .success(let declaration):
                let key = (declaration.isShared ? "shared" : "user \(declaration.owner)") + " " + declaration.name
                if let first = seen[key] {
                    problems.append((number, "\(declaration.name) is already declared on line \(first)"))
                } else if declarations.count >= Self.maximumDeclarations {
                    problems.append((number, "more than \(Self.maximumDeclarations) declarations"))
                } else {
                    seen[key] = number
                    declarations.append(declaration)
                }
            }
        }
        if !problems.isEmpty { throw BootstrapPolicyError(file: file, problems: problems) }
        self.declarations = declarations
    }

    private struct Problem: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    private static func declaration(_ keyword: String, _ words: [String], line: Int) -> Result<Declaration, Problem> {
        guard keyword == "shared" || keyword == "declare" else {
            return .failure(Problem("unknown keyword \(keyword.debugDescription) (expected `shared` or `declare`)"))
        }
        let ownerKey = keyword == "shared" ? "owner" : "user"
        guard let name = words.first else { return .failure(Problem("`\(keyword)` needs a NAME")) }
        guard BootstrapName.isValid(name) else {
            return .failure(Problem("\(name.debugDescription) is not a valid service name (1–\(BootstrapName.maximumLength) of A–Z a–z 0–9 . _ - : @)"))
        }
        var options: [String: String] = [:]
        for word in words.dropFirst() {
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, !parts[1].isEmpty else {
                return .failure(Problem("expected KEY=VALUE, got \(word.debugDescription)"))
            }
            guard parts[0] == ownerKey || parts[0] == "unit" else {
                return .failure(Problem("unknown option \(parts[0].debugDescription) for `\(keyword)` (expected \(ownerKey)= and unit=)"))
            }
            guard options[parts[0]] == nil else { return .failure(Problem("\(parts[0])= given twice")) }
            options[parts[0]] = parts[1]
        }
        guard let ownerText = options[ownerKey] else { return .failure(Problem("`\(keyword) \(name)` needs \(ownerKey)=UID")) }
        guard let owner = parseUID(ownerText) else {
            return .failure(Problem("\(ownerKey)= must be a numeric uid below 4294967295, got \(ownerText.debugDescription)"))
        }
        let unit = options["unit"]
        if let unit, !isValidUnit(unit) {
            return .failure(Problem("\(unit.debugDescription) is not a unit name (like harbor-echo.service)"))
        }
        return .success(Declaration(name: name, isShared: keyword == "shared", owner: owner, unit: unit, line: line))
    }

    private static func parseUID(_ text: String) -> uid_t? {
        guard !text.isEmpty, text.count <= 10, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let value = UInt64(text), value < UInt64(UInt32.max) else { return nil }
        return uid_t(value)
    }

    /// systemd's unit-name characters, a dot-suffix, at most 255 bytes; never an option (`-…`).
    static func isValidUnit(_ unit: String) -> Bool {
        let bytes = Array(unit.utf8)
        guard bytes.count <= 255, let first = bytes.first, first != UInt8(ascii: "-"),
              let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot > 0, dot < bytes.count - 1 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: ":"), UInt8(ascii: "-"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "@"), UInt8(ascii: "\\"):
                true
            default:
                false
            }
        }
    }
}

/// A policy file that could not be used: each problem with its line number.
public struct BootstrapPolicyError: Error, Sendable, CustomStringConvertible {
    /// The file's name as given.
    public let file: String
    /// The problems, as (line number, what is wrong); line 0 is the whole file.
    public let problems: [(line: Int, message: String)]

    init(file: String, problems: [(Int, String)]) {
        self.file = file
        self.problems = problems.map { (line: $0.0, message: $0.1) }
    }

    /// One `FILE:LINE: message` line per problem.
    public var description: String {
        problems.map { $0.line > 0 ? "\(file):\($0.line): \($0.message)" : "\(file): \($0.message)" }
            .joined(separator: "\n")
    }
}
