// Harbor — the sock_diag client: which socket a descriptor is connected to,
// the fact the forgery checks rest on (P11).
import Glibc
import HarborSystem
import HarborTestSupport
import Testing

@Suite(.deadline) struct SocketDiagnosticsTests {
    @Test func P11_theKernelNamesEachEndOfASocketPairAsTheOthersPeer() throws {
        try expectNoDescriptorLeak { () throws in
            let (one, other) = try SeqPacketSocket.makePair()
            let third = try SeqPacketSocket.makePair()
            #expect(try SocketDiagnostics.peerInode(of: one.rawValue) == FileKey(of: other.rawValue).inode)
            #expect(try SocketDiagnostics.peerInode(of: other.rawValue) == FileKey(of: one.rawValue).inode)
            #expect(try SocketDiagnostics.peerInode(of: one.rawValue) != FileKey(of: third.0.rawValue).inode)
        }
    }

    @Test func P11_aDescriptorThatIsNotASocketHasNoPeer() throws {
        try expectNoDescriptorLeak { () throws in
            let counter = try EventDescriptor()
            do throws(SystemError) {
                _ = try SocketDiagnostics.peerInode(of: counter.rawValue)
                Issue.record("an eventfd has no peer")
            } catch {
                #expect(error.code == ENOENT)
            }
        }
    }
}
