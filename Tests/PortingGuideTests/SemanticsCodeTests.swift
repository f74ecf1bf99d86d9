// Harbor — Docs/Semantics.md's "Code:" pointers lead somewhere: every name an entry gives is a file, a folder,
// a module or a declaration under Sources (the search the page shows finds it).
import Foundation
import Testing

extension PortingGuideTests {
    @Suite struct SemanticsCodeTests {
        /// Each tag's entry names its code, and each name it gives (a type,
        /// `Type.member`, a file such as `Loop+Run`, a folder such as
        /// `HarborRunLoop/Timers`) is found in the repository.
        @Test func everyTagsCodeIsFound() throws {
            let entries = try SemanticsEntries.parse()
            #expect(entries.count >= 40, "Semantics.md's entries were not found")
            let sources = try SourceIndex(root: GuideSnippets.root)
            for entry in entries {
                guard let code = entry.code else {
                    Issue.record("Docs/Semantics.md:\(entry.line): \(entry.tag) names no code (\"Code: …\")")
                    continue
                }
                let names = SemanticsEntries.backticked(code)
                if names.isEmpty { Issue.record("Docs/Semantics.md:\(entry.line): \(entry.tag)'s Code: names nothing in backticks") }
                for name in names where !sources.finds(name) {
                    Issue.record("Docs/Semantics.md:\(entry.line): \(entry.tag)'s code `\(name)` is no file, folder, module or declaration under Sources")
                }
            }
        }
    }
}

/// The tagged entries of Docs/Semantics.md: `- **RL07 Title.** … Code: … Tests: …`.
enum SemanticsEntries {
    struct Entry { var tag: String; var line: Int; var code: String? }

    static func parse() throws -> [Entry] {
        let text = try String(contentsOfFile: GuideSnippets.root.appendingPathComponent("Docs/Semantics.md").path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var entries: [(tag: String, line: Int, text: String)] = []
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("- **"), let tag = line.dropFirst(4).split(separator: " ").first,
               tag.first!.isUppercase, tag.contains(where: \.isNumber) {
                entries.append((String(tag), index + 1, line))
            } else if line.hasPrefix("  "), !entries.isEmpty {
                entries[entries.count - 1].text += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        return entries.map { entry in
            guard let start = entry.text.range(of: "Code: ") else { return Entry(tag: entry.tag, line: entry.line, code: nil) }
            let rest = entry.text[start.upperBound...]
            let end = rest.range(of: "Tests: ")?.lowerBound ?? rest.endIndex
            return Entry(tag: entry.tag, line: entry.line, code: String(rest[..<end]))
        }
    }

    /// The names between backticks.
    static func backticked(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}

/// What is under Sources: file names, folders, modules, declared names.
struct SourceIndex {
    var files: Set<String> = []
    var folders: Set<String> = []
    var declared: Set<String> = []
    var words: Set<String> = []
    let root: URL

    init(root: URL) throws {
        self.root = root
        let sources = root.appendingPathComponent("Sources")
        guard let walk = FileManager.default.enumerator(atPath: sources.path) else { return }
        let declaration = /(?:class|struct|enum|actor|protocol|typealias|extension|func|var|let|case)\s+([A-Za-z_][A-Za-z0-9_]*)/
        while let relative = walk.nextObject() as? String {
            let url = sources.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            if isDirectory.boolValue { folders.insert(relative); folders.insert(url.lastPathComponent); continue }
            guard relative.hasSuffix(".swift") else { continue }
            files.insert(url.deletingPathExtension().lastPathComponent)
            let text = try String(contentsOf: url, encoding: .utf8)
            for match in text.matches(of: declaration) { declared.insert(String(match.1)) }
        }
    }

    /// Whether `name` (as Semantics.md writes it) is found.
    func finds(_ name: String) -> Bool {
        if name.hasSuffix(".md") {
            return FileManager.default.fileExists(atPath: root.appendingPathComponent("Docs/\(name)").path)
        }
        if name.contains("/") {
            let path = ["Sources/", "Scripts/", "Examples/", "Tools/"].contains(where: name.hasPrefix) ? name : "Sources/\(name)"
            return FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path)
        }
        if files.contains(name) || declared.contains(name) || folders.contains(name) { return true }
        // `Type.member` (members may be abbreviated with "…": `Message.take…Right`).
        let parts = name.split(separator: ".").map(String.init)
        guard parts.count == 2, declared.contains(parts[0]) || files.contains(parts[0]) else { return false }
        let member = parts[1].split(separator: "…").map(String.init)
        return declared.contains { candidate in
            candidate.hasPrefix(member[0]) && (member.count == 1 ? candidate == member[0] : candidate.hasSuffix(member.last!))
        }
    }
}
