// Harbor — test support: the real tshark with the repository's Wireshark dissector.
import Glibc

/// The real tshark, run with the repository's dissector.
public enum Tshark {
    /// tshark's path, or nil when it is not installed.
    public static let path: String? = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first { access($0, X_OK) == 0 }

    /// Tools/wireshark/harbor.lua in this checkout.
    public static var dissector: String {
        let parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        return parts.dropLast(3).joined(separator: "/") + "/Tools/wireshark/harbor.lua"
    }

    /// Runs tshark with the dissector and `arguments`; its standard output.
    public static func run(_ arguments: [String]) throws -> String {
        let child = Child([path!, "-X", "lua_script:\(dissector)"] + arguments,
                          environment: baseEnvironment() + ["LC_ALL=C.UTF-8"])
        _ = child.waitFor("\u{0}never", on: child.stdoutDescriptor, before: .now + .seconds(120))
        let status = child.exitCode(before: .now + .seconds(30))
        _ = child.waitForStderr("\u{0}never", before: .now + .milliseconds(100))
        guard status == 0 else {
            throw TsharkFailure(description: "tshark \(arguments) exited \(String(describing: status)): \(child.stderrSoFar)")
        }
        let errors = child.stderrSoFar.split(separator: "\n").filter { !$0.hasPrefix("Running as user") }
        guard errors.isEmpty else { throw TsharkFailure(description: "tshark \(arguments) said: \(errors)") }
        return child.stdoutSoFar
    }

    /// One row a packet of `fields`, tab-separated by tshark.
    public static func fields(_ file: String, _ fields: [String]) throws -> [[String]] {
        let output = try run(["-r", file, "-T", "fields", "-E", "separator=/t"] + fields.flatMap { ["-e", $0] })
        return output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Writes `bytes` to a new file at `path`.
    public static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }
}

/// tshark failed or complained.
public struct TsharkFailure: Error, CustomStringConvertible {
    public let description: String
}
