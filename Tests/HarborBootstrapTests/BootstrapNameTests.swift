// Harbor — P10: which bytes a service name may hold, byte by byte, on both sides of the protocol.
import HarborBootstrap
import Testing

extension BootstrapTests {
    @Suite struct BootstrapNameTests {
        /// P10: a name is 1–128 bytes of `A–Z a–z 0–9 . _ - : @`. Every
        /// byte value alone, at the start, the middle and the end of a
        /// valid name: accepted exactly when it is in that list, by the
        /// client's check and the server's decoding alike.
        @Test func P10_aNameHoldsExactlyTheListedBytes() {
            let listed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:@".utf8)
            for value in 0...255 {
                let byte = UInt8(value)
                let expected = listed.contains(byte)
                for body in [[byte], [byte] + Array("ab".utf8), Array("a".utf8) + [byte] + Array("b".utf8),
                             Array("ab".utf8) + [byte]] {
                    #expect((BootstrapName.decode(body) != nil) == expected, "byte \(value) in \(body)")
                }
                if byte < 128 {
                    let name = String(UnicodeScalar(byte))
                    #expect(BootstrapName.isValid(name) == expected, "byte \(value)")
                    #expect((BootstrapName.body(name) != nil) == expected, "byte \(value)")
                }
            }
            #expect(BootstrapName.decode(Array(repeating: UInt8(ascii: "a"), count: 128)) != nil)
            #expect(BootstrapName.decode(Array(repeating: UInt8(ascii: "a"), count: 129)) == nil)
            #expect(BootstrapName.decode([]) == nil)
        }
    }
}
