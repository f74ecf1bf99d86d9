// Harbor — Docs/Porting.md shows exactly the code these tests compile: each ```swift block under a
// `<!-- snippet: name -->` marker must equal the lines between `// snippet: name` and `// end snippet`
// in Tests/PortingGuideTests/Snippets or Sources/harbor-seeds (indentation removed).
import Foundation
import Testing

extension PortingGuideTests {
    @Suite struct GuideSnippetTests {
        /// Every snippet in the guide is a compiled one, word for word; every
        /// compiled one is in the guide, once. With `PORTING_GUIDE_UPDATE=1`
        /// in the environment the guide's blocks are first rewritten from
        /// the sources (then review the diff).
        @Test func theGuideShowsExactlyTheCompiledSnippets() throws {
            let sources = try GuideSnippets.compiled()
            if ProcessInfo.processInfo.environment["PORTING_GUIDE_UPDATE"] == "1" {
                try GuideSnippets.rewriteGuide(from: sources.snippets)
            }
            for duplicate in sources.duplicates { Issue.record("snippet \(duplicate) is defined twice in the sources") }
            let guide = try GuideSnippets.guide()
            for problem in guide.problems { Issue.record("Porting.md: \(problem)") }
            var shown: [String: Int] = [:]
            for block in guide.blocks {
                shown[block.name, default: 0] += 1
                guard let source = sources.snippets[block.name] else {
                    Issue.record("Porting.md shows snippet \(block.name), which no source defines")
                    continue
                }
                #expect(block.lines == source.lines,
                        "Porting.md's snippet \(block.name) differs from \(source.file); it should read:\n\(source.lines.joined(separator: "\n"))")
            }
            for name in sources.snippets.keys.sorted() where shown[name] != 1 {
                Issue.record("snippet \(name) (\(sources.snippets[name]!.file)) is shown \(shown[name] ?? 0) times in Porting.md, not once")
            }
            // A guide whose markers the parser no longer finds must not pass as "nothing differs".
            #expect(guide.blocks.count >= 20 && sources.snippets.count >= 20)
        }
    }
}

/// Reads the snippets out of the sources and the guide.
enum GuideSnippets {
    struct Snippet { var file: String; var lines: [String] }
    struct Block { var name: String; var lines: [String] }

    /// The repository: three levels above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let guidePath = root.appendingPathComponent("Docs/Porting.md").path
    static let sourceFolders = ["Tests/PortingGuideTests/Snippets", "Sources/harbor-seeds"]

    static let startMarker = "// snippet: "
    static let endMarker = "// end snippet"

    /// Every `// snippet: name` … `// end snippet` region of the source folders.
    static func compiled() throws -> (snippets: [String: Snippet], duplicates: [String]) {
        var snippets: [String: Snippet] = [:]
        var duplicates: [String] = []
        for folder in sourceFolders {
            let directory = root.appendingPathComponent(folder)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }.sorted()
            for file in files {
                let lines = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                var current: (name: String, lines: [String])?
                for line in lines {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.hasPrefix(startMarker) {
                        current = (String(trimmed.dropFirst(startMarker.count)), [])
                    } else if trimmed == endMarker, let done = current {
                        if snippets[done.name] != nil { duplicates.append(done.name) }
                        snippets[done.name] = Snippet(file: "\(folder)/\(file)", lines: dedent(done.lines))
                        current = nil
                    } else if current != nil {
                        current!.lines.append(line)
                    }
                }
            }
        }
        return (snippets, duplicates)
    }

    /// The ```swift blocks that follow a `<!-- snippet: name -->` line.
    static func guide() throws -> (blocks: [Block], problems: [String]) {
        let lines = try String(contentsOfFile: guidePath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = []
        var problems: [String] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            if lines[index] == "```swift" {
                // Swift the tests do not compile could rot: every block is a snippet.
                problems.append("line \(index + 1): a ```swift block without a snippet marker above it")
            }
            guard let name = markerName(lines[index]) else { continue }
            guard index + 1 < lines.count, lines[index + 1] == "```swift" else {
                problems.append("line \(index + 1): the marker for \(name) is not followed by a ```swift line")
                continue
            }
            guard let end = lines[(index + 2)...].firstIndex(of: "```") else {
                problems.append("line \(index + 1): the block of \(name) never ends")
                break
            }
            blocks.append(Block(name: name, lines: Array(lines[(index + 2)..<end])))
            index = end
        }
        return (blocks, problems)
    }

    /// Replaces each marked block of the guide with its source's lines.
    static func rewriteGuide(from snippets: [String: Snippet]) throws {
        let lines = try String(contentsOfFile: guidePath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var output: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            output.append(line)
            index += 1
            guard let name = markerName(line), let snippet = snippets[name],
                  index < lines.count, lines[index] == "```swift",
                  let end = lines[(index + 1)...].firstIndex(of: "```") else { continue }
            output += ["```swift"] + snippet.lines + ["```"]
            index = end + 1
        }
        try output.joined(separator: "\n").write(toFile: guidePath, atomically: true, encoding: .utf8)
    }

    static func markerName(_ line: String) -> String? {
        guard line.hasPrefix("<!-- snippet: "), line.hasSuffix(" -->") else { return nil }
        return String(line.dropFirst("<!-- snippet: ".count).dropLast(" -->".count))
    }

    /// Lines without their common indentation (and without trailing blanks).
    static func dedent(_ lines: [String]) -> [String] {
        let indent = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { line in
            line.trimmingCharacters(in: .whitespaces).isEmpty ? "" : String(line.dropFirst(indent))
        }
    }
}
