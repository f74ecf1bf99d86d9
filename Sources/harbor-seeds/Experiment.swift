// Harbor — what every seed experiment provides, and small helpers they share.
import Glibc
import Harbor
import HarborSystem

/// One experiment from a seed article. It only runs and tells what
/// happened: what the article says should happen lives in the tests
/// (`Tests/PortingGuideTests/SeedExperimentTests.swift`), which run this
/// executable and compare its output with the article's.
protocol Experiment {
    /// The name `harbor-seeds <name>` takes.
    static var name: String { get }
    static var summary: String { get }
    /// Which seed, and which section of it.
    static var article: String { get }
    /// Runs the experiment, handing each event to `print` (from whichever
    /// thread it happens on) in the order it happens.
    static func run(print: @escaping @Sendable (String) -> Void)
}

/// An ordered log written from any thread.
final class Log: Sendable {
    private let lines = HarborLock<[String]>([])
    func callAsFunction(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}
