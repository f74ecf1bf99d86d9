// Harbor — every ```swift block of every guide (Docs/*.md and the DocC catalogs, Sources/*/*.docc/*.md) is
// code the tests compile: a block under a `<!-- snippet: name -->` marker must equal the lines between
// `// snippet: name` and `// end snippet` in the snippet sources (indentation removed; several regions of one
// name in one file join, so a wrapper can declare what a fragment uses, or a block can show its imports);
// a block under `<!-- not compiled: reason -->` is one of the few listed exceptions (`GuideSnippets.notCompiled`).
import Foundation
import Testing

extension PortingGuideTests {
    @Suite struct GuideSnippetTests {
        /// Every Swift block of every guide is a compiled snippet, word for
        /// word, or a listed exception; every compiled snippet is shown. With
        /// `PORTING_GUIDE_UPDATE=1` in the environment the guides' blocks are
        /// first rewritten from the sources (then review the diff).
        @Test func everyGuideShowsExactlyTheCompiledSnippets() throws {
            let sources = try GuideSnippets.compiled()
            if ProcessInfo.processInfo.environment["PORTING_GUIDE_UPDATE"] == "1" {
                for guide in try GuideSnippets.guidePaths() { try GuideSnippets.rewrite(guide, from: sources.snippets) }
            }
            for duplicate in sources.duplicates { Issue.record("snippet \(duplicate) is defined in two files") }
            var shown: [String: Int] = [:]
            var exceptions: [String] = []
            var blockCount = 0
            for guide in try GuideSnippets.guidePaths() {
                let parsed = try GuideSnippets.blocks(of: guide)
                for problem in parsed.problems { Issue.record("\(guide):\(problem)") }
                exceptions += parsed.exceptions
                for block in parsed.blocks {
                    blockCount += 1
                    shown[block.name, default: 0] += 1
                    guard let source = sources.snippets[block.name] else {
                        Issue.record("\(guide):\(block.line): shows snippet \(block.name), which no source defines")
                        continue
                    }
                    #expect(block.lines == source.lines,
                            "\(guide):\(block.line): snippet \(block.name) differs from \(source.file); it should read:\n\(source.lines.joined(separator: "\n"))")
                }
            }
            for name in sources.snippets.keys.sorted() where shown[name] == nil {
                Issue.record("snippet \(name) (\(sources.snippets[name]!.file)) is shown in no guide")
            }
            // The exceptions are few and listed: a new one is a decision, not an accident.
            #expect(exceptions.sorted() == GuideSnippets.notCompiled.sorted(),
                    "the blocks not compiled are \(exceptions.sorted()), the list GuideSnippets.notCompiled says \(GuideSnippets.notCompiled.sorted())")
            // Guides whose markers the parser no longer finds must not pass as "nothing differs".
            #expect(blockCount >= 45 && sources.snippets.count >= 40)
        }
    }
}

/// Reads the snippets out of the sources and the guides.
enum GuideSnippets {
    struct Snippet { var file: String; var lines: [String] }
    struct Block { var name: String; var line: Int; var lines: [String] }

    /// The repository: three levels above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Where the compiled snippets are (`Examples`: the examples' own code, which `swift build` builds).
    static let sourceFolders = ["Tests/PortingGuideTests/Snippets", "Sources/harbor-seeds", "Tests/HarborRunLoopTests",
                                 "Examples/ClockInterface", "Examples/ClockService", "Examples/ClockClient",
                                 "Examples/ClockActorService", "Examples/ClockActorClient"]

    /// The blocks no test compiles, as `guide: reason`: keep this short.
    static let notCompiled = [
        "Docs/MachPort.md: Darwin's imports beside Harbor's",
        "Docs/WriteAService.md: a package manifest (PackageDescription is no module a test can import)",
    ]

    static let startMarker = "// snippet: "
    static let endMarker = "// end snippet"

    /// Every guide, relative to the repository: Docs/*.md and every DocC catalog's articles.
    static func guidePaths() throws -> [String] {
        let manager = FileManager.default
        var paths = try manager.contentsOfDirectory(atPath: root.appendingPathComponent("Docs").path)
            .filter { $0.hasSuffix(".md") }.map { "Docs/\($0)" }
        let sources = root.appendingPathComponent("Sources")
        for module in try manager.contentsOfDirectory(atPath: sources.path) {
            let moduleDirectory = sources.appendingPathComponent(module)
            guard let entries = try? manager.contentsOfDirectory(atPath: moduleDirectory.path) else { continue }
            for catalog in entries where catalog.hasSuffix(".docc") {
                paths += try manager.contentsOfDirectory(atPath: moduleDirectory.appendingPathComponent(catalog).path)
                    .filter { $0.hasSuffix(".md") }.map { "Sources/\(module)/\(catalog)/\($0)" }
            }
        }
        return paths.sorted()
    }

    /// Every `// snippet: name` … `// end snippet` region of the source
    /// folders; regions of one name in one file join, in order.
    static func compiled() throws -> (snippets: [String: Snippet], duplicates: [String]) {
        var snippets: [String: Snippet] = [:]
        var duplicates: [String] = []
        for folder in sourceFolders {
            let directory = root.appendingPathComponent(folder)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }.sorted()
            for file in files {
                let lines = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                let path = "\(folder)/\(file)"
                var current: (name: String, lines: [String])?
                for line in lines {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.hasPrefix(startMarker) {
                        current = (String(trimmed.dropFirst(startMarker.count)), [])
                    } else if trimmed == endMarker, let done = current {
                        let region = dedent(done.lines)
                        if let earlier = snippets[done.name] {
                            if earlier.file == path { snippets[done.name]!.lines += region } else { duplicates.append(done.name) }
                        } else {
                            snippets[done.name] = Snippet(file: path, lines: region)
                        }
                        current = nil
                    } else if current != nil {
                        current!.lines.append(line)
                    }
                }
            }
        }
        return (snippets, duplicates)
    }

    /// The ```swift blocks of `guide` that follow a `<!-- snippet: name -->`
    /// line, the `guide: reason` of those under `<!-- not compiled: reason -->`,
    /// and each block with neither, as a problem.
    static func blocks(of guide: String) throws -> (blocks: [Block], exceptions: [String], problems: [String]) {
        let lines = try String(contentsOfFile: root.appendingPathComponent(guide).path, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = []
        var exceptions: [String] = []
        var problems: [String] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            if line == "```swift" {
                // Swift the tests do not compile could rot: every block is a snippet or a listed exception.
                problems.append("\(index + 1): a ```swift block without a snippet marker above it")
            }
            if let reason = marker(lines[index], "<!-- not compiled: ") {
                exceptions.append("\(guide): \(reason)")
                if let end = lines[(index + 1)...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "```" }) { index = end }
                continue
            }
            guard let name = marker(lines[index], "<!-- snippet: ") else { continue }
            guard index + 1 < lines.count, lines[index + 1] == "```swift" else {
                problems.append("\(index + 1): the marker for \(name) is not followed by a ```swift line")
                continue
            }
            guard let end = lines[(index + 2)...].firstIndex(of: "```") else {
                problems.append("\(index + 1): the block of \(name) never ends")
                break
            }
            blocks.append(Block(name: name, line: index + 2, lines: Array(lines[(index + 2)..<end])))
            index = end
        }
        return (blocks, exceptions, problems)
    }

    /// Replaces each marked block of `guide` with its source's lines.
    static func rewrite(_ guide: String, from snippets: [String: Snippet]) throws {
        let path = root.appendingPathComponent(guide).path
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var output: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            output.append(line)
            index += 1
            guard let name = marker(line, "<!-- snippet: "), let snippet = snippets[name],
                  index < lines.count, lines[index] == "```swift",
                  let end = lines[(index + 1)...].firstIndex(of: "```") else { continue }
            output += ["```swift"] + snippet.lines + ["```"]
            index = end + 1
        }
        let text = output.joined(separator: "\n")
        if text != lines.joined(separator: "\n") { try text.write(toFile: path, atomically: true, encoding: .utf8) }
    }

    /// What follows `prefix` on a `prefix … -->` line.
    static func marker(_ line: String, _ prefix: String) -> String? {
        guard line.hasPrefix(prefix), line.hasSuffix(" -->") else { return nil }
        return String(line.dropFirst(prefix.count).dropLast(" -->".count))
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
