// Harbor — P10: the policy file, parsed as hostile input with line-numbered errors.
import HarborBootstrap
import Testing

extension BootstrapTests {
    @Suite struct PolicyTests {
        /// P10: `shared` and `declare` lines become declarations with their
        /// owner, unit and line; comments and blank lines are skipped.
        @Test func P10_policyFileDeclaresSharedAndPerUserNames() throws {
            let text = """
                # Harbor policy
                shared  com.example.clock owner=0 unit=harbor-clock.service   # every uid looks it up

                declare com.example.echo  user=1000
                declare com.example.echo  user=1001\tunit=echo@1001.service
                """
            let policy = try BootstrapPolicy(parsing: Array(text.utf8))
            #expect(policy.declarations.count == 3)
            let clock = try #require(policy.declarations.first)
            #expect(clock.name == "com.example.clock" && clock.isShared && clock.owner == 0)
            #expect(clock.unit == "harbor-clock.service" && clock.line == 2)
            #expect(policy.declarations[1].isShared == false && policy.declarations[1].owner == 1000)
            #expect(policy.declarations[1].unit == nil)
            #expect(policy.declarations[2].unit == "echo@1001.service" && policy.declarations[2].line == 5)
        }

        /// P10: every bad line is reported with its number; nothing is applied.
        @Test func P10_policyFileErrorsNameTheirLines() {
            let text = """
                shared ok.name owner=0
                frobnicate x owner=0
                shared bad/name owner=0
                shared nouid
                declare x user=-1
                declare y user=4294967295
                declare z user=12 unit=--now
                shared w owner=0 owner=1
                shared v owner=0 colour=blue
                shared ok.name owner=5
                declare u user=1 unit=
                """
            var caught: BootstrapPolicyError?
            do { _ = try BootstrapPolicy(parsing: Array(text.utf8), file: "test.conf") } catch { caught = error }
            let error = caught
            #expect(error != nil)
            let lines = error?.problems.map(\.line) ?? []
            #expect(lines == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "\(error?.description ?? "")")
            #expect(error?.description.hasPrefix("test.conf:2: unknown keyword \"frobnicate\"") == true)
            #expect(error?.description.contains("test.conf:10: ok.name is already declared on line 1") == true)
        }

        /// P10: hostile bytes (NUL, invalid UTF-8, huge lines, huge files)
        /// give errors, never a crash or a partial policy.
        @Test func P10_policyFileRejectsHostileBytes() {
            func rejects(_ bytes: [UInt8]) -> Bool {
                do { _ = try BootstrapPolicy(parsing: bytes); return false } catch { return !error.problems.isEmpty }
            }
            #expect(rejects(Array("shared a\0b owner=0".utf8)))
            #expect(rejects([0x73, 0x68, 0xFF, 0xFE, 0x0A]))
            #expect(rejects(Array(repeating: UInt8(ascii: "a"), count: 5000)))
            #expect(rejects(Array(repeating: UInt8(ascii: "\n"), count: BootstrapPolicy.maximumSize + 1)))
            #expect(rejects(Array(("shared " + String(repeating: "n", count: 200) + " owner=0").utf8)))
            // A fuzz pass: random bytes from the policy alphabet never trap.
            var generator = SystemRandomNumberGenerator()
            let alphabet = Array("shared declare owner=user=unit= 0123456789.-_@#\t\n=x\u{0}".utf8)
            for _ in 0..<2000 {
                let length = Int.random(in: 0..<120, using: &generator)
                let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
                _ = try? BootstrapPolicy(parsing: bytes)
            }
            let empty = try? BootstrapPolicy(parsing: [])
            #expect(empty?.declarations.isEmpty == true)
        }
    }
}
