// Harbor fuzzing — the policy file parser (harbord's `--policy` file).
//
// The input is the file's bytes. A valid policy must survive being written
// back as text and parsed again unchanged; an invalid one must produce its
// report (every problem with its line) without trapping.
import Glibc
import HarborBootstrap
import HarborSystem
import HarborTransport

enum PolicyTarget {
    static func run(_ data: [UInt8]) {
        let policy: BootstrapPolicy
        do { policy = try BootstrapPolicy(parsing: data, file: "fuzz") } catch {
            _ = error.description
            return
        }
        let text = policy.declarations.map { declaration in
            let owner = declaration.isShared ? "owner" : "user"
            return "\(declaration.isShared ? "shared" : "declare") \(declaration.name) \(owner)=\(declaration.owner)"
                + (declaration.unit.map { " unit=\($0)" } ?? "")
        }.joined(separator: "\n")
        do {
            let again = try BootstrapPolicy(parsing: Array(text.utf8), file: "again")
            let before = policy.declarations.map { [$0.name, "\($0.isShared)", "\($0.owner)", $0.unit ?? "-"] }
            let after = again.declarations.map { [$0.name, "\($0.isShared)", "\($0.owner)", $0.unit ?? "-"] }
            if before != after { fail("a policy written back parsed differently: \(before) → \(after)") }
        } catch {
            fail("a valid policy written back was refused: \(error)")
        }
    }

    static let seeds: [[UInt8]] = [
        "",
        "# nothing but a comment\n",
        "shared  com.example.clock owner=0 unit=harbor-clock.service\n",
        "declare com.example.echo user=1000 unit=echo.service\n",
        """
        # shared NAME owner=UID [unit=UNIT]
        shared  com.example.clock owner=0 unit=harbor-clock.service

        # declare NAME user=UID [unit=UNIT]
        declare com.example.echo user=1000 unit=echo.service
        declare com.example.echo user=1001\t# the same name, another uid
        declare a:b@c-d_e.f user=4294967294 unit=x@y.service\r
        """,
        "declare com.example.echo user=1000\ndeclare com.example.echo user=1000\n",
        "shared x owner=1 unit=-x.service\n",
        "bogus line\nshared\nshared n owner=\nshared n owner=99999999999\n",
    ].map { Array($0.utf8) }

    /// Line-level mutation: whole declarations added, repeated, dropped or swapped.
    static func mutate(_ bytes: [UInt8], maxSize: Int, random: inout SplitMix) -> [UInt8]? {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        let templates = [
            "declare com.example.n\(random.next() % 100) user=\(random.next() % 3 == 0 ? 4_294_967_295 : random.next() % 2000)",
            "shared com.example.s\(random.next() % 100) owner=0 unit=s\(random.next() % 10).service",
            "# comment", "", "declare \(String(repeating: "n", count: Int(random.next() % 140))) user=1",
            "shared x owner=0 unit=\(String(repeating: "u", count: Int(random.next() % 260))).service",
            String(repeating: "#", count: 1025),
        ]
        switch random.next() % 4 {
        case 0: lines.insert(Array(templates[Int(random.next() % UInt64(templates.count))].utf8),
                             at: Int(random.next() % UInt64(lines.count + 1)))
        case 1 where !lines.isEmpty:
            let index = Int(random.next() % UInt64(lines.count))
            lines.insert(lines[index], at: index)
        case 2 where !lines.isEmpty: lines.remove(at: Int(random.next() % UInt64(lines.count)))
        default:
            if lines.count > 1 { lines.swapAt(0, Int(random.next() % UInt64(lines.count))) }
        }
        let joined = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
        return joined.count <= maxSize ? joined : nil
    }
}
