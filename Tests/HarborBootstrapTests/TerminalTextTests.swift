// Harbor — P12: what the CLI prints from a peer cannot drive the terminal: controls, C1, bidi and invalid UTF-8 escaped.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct TerminalTextTests {
        /// P12: C0 controls, ESC and DEL are escaped, with the four common
        /// ones by their short names.
        @Test func P12_c0ControlsAndDelAreEscaped() {
            #expect(TerminalText.escaped("a\u{1B}[2Jb") == "a\\u{1B}[2Jb")
            #expect(TerminalText.escaped("\0\t\n\r") == "\\0\\t\\n\\r")
            #expect(TerminalText.escaped("\u{07}\u{08}\u{1F}\u{7F}") == "\\u{7}\\u{8}\\u{1F}\\u{7F}")
        }

        /// P12: C1 controls (U+009B, a one-character CSI; U+0085, NEL) are
        /// escaped: they are ≥ 32, which is what let them through before.
        @Test func P12_c1ControlsAreEscaped() {
            #expect(TerminalText.escaped("x\u{9B}31mred") == "x\\u{9B}31mred")
            #expect(TerminalText.escaped("line\u{85}break") == "line\\u{85}break")
            #expect(TerminalText.escaped("\u{80}\u{9F}") == "\\u{80}\\u{9F}")
        }

        /// P12: bidi controls and invisible format characters are escaped,
        /// so a name cannot be shown reversed or look like another.
        @Test func P12_bidiAndInvisibleFormatCharactersAreEscaped() {
            #expect(TerminalText.escaped("evil\u{202E}txt.exe") == "evil\\u{202E}txt.exe")
            let spoofers: [UInt32] = [0x061C, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C,
                                      0x202D, 0x202E, 0x2028, 0x2029, 0x2066, 0x2067, 0x2068, 0x2069, 0xFEFF]
            for value in spoofers {
                let scalar = Unicode.Scalar(value)!
                let escaped = TerminalText.escaped("a" + String(Character(scalar)) + "b")
                #expect(escaped == "a\\u{\(String(value, radix: 16, uppercase: true))}b")
            }
        }

        /// P12: bytes that are not valid UTF-8 are shown as `\xFF`, one per
        /// byte; the valid text around them is kept (and escaped).
        @Test func P12_invalidUTF8BytesAreShownAsHex() {
            #expect(TerminalText.escaped(utf8: [0x61, 0xFF, 0x62]) == "a\\xFFb")
            #expect(TerminalText.escaped(utf8: [0xC2]) == "\\xC2")  // a truncated sequence
            #expect(TerminalText.escaped(utf8: [0xC0, 0x80]) == "\\xC0\\x80")  // an overlong NUL
            #expect(TerminalText.escaped(utf8: [0xED, 0xA0, 0x80]) == "\\xED\\xA0\\x80")  // a surrogate
            #expect(TerminalText.escaped(utf8: Array("é\u{9B}".utf8) + [0x80]) == "é\\u{9B}\\x80")
        }

        /// P12: plain text of any script is printed as it is, and escaping
        /// twice changes nothing (the CLI's last gate may see escaped text).
        @Test func P12_plainTextIsUnchanged() {
            for text in ["héllo 東京", "com.example.echo", "Ünïcødé — ok… µs", "emoji 🚢", "back\\slash \"quoted\"", ""] {
                #expect(TerminalText.escaped(text) == text)
                #expect(TerminalText.escaped(utf8: Array(text.utf8)) == text)
            }
            let once = TerminalText.escaped("a\u{1B}\u{9B}\u{202E}\\")
            #expect(TerminalText.escaped(once) == once)
            #expect(TerminalText.quoted("say \"hi\"\\ \u{202E}") == "\"say \\\"hi\\\"\\\\ \\u{202E}\"")
        }

        /// P12: end to end, `harbor watch` run by root prints a body carrying
        /// a C1 CSI and a bidi override with both escaped: its stdout holds
        /// no raw C1 or bidi character.
        @Test func P12_harborWatchPrintsNoRawControlsFromABody() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(policy: "declare tty.victim user=0\n")
                #expect(harbord.waitUntilReady(), "harbord did not start: \(harbord.child.stderrSoFar)")
                let client = try harbord.client()
                let service = try client.lookUp("tty.victim")
                try service.send(Message(id: 7, text: "a\u{9B}31mb\u{202E}c\u{85}d"), timeout: .seconds(5))
                let watch = harbord.harbor(["watch", "tty.victim", "--count", "1", "--idle", "10"])
                #expect(watch.exitCode() == 0, "watch: \(watch.stderrSoFar)")
                let output = watch.allStdout()
                #expect(output.contains("\"a\\u{9B}31mb\\u{202E}c\\u{85}d\""), "watch printed: \(output.debugDescription)")
                let raw = output.unicodeScalars.filter { $0 != "\n" && TerminalText.needsEscaping($0) }
                #expect(raw.isEmpty, "raw controls on stdout: \(raw.map { String($0.value, radix: 16) })")
                #expect(harbord.stop() == 0)
            }
        }
    }
}
