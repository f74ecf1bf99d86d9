// Harbor — P11: the registry of ports this process knows by identity, and
// the table of its live ports: each record found by its key while its port
// lives, and gone with it.
import HarborSystem
import HarborTestSupport
import Testing
@testable import HarborPorts

@Suite(.deadline) struct PortRegistryTests {
    /// Two ports standing for one identity (two records: the first held
    /// without an array, the second beside it), one registered with the
    /// key its import hashed and one hashed again as it goes: each is found
    /// by its slot counter's file, a third file is a forgery, and each
    /// record goes with its port, the survivor still found.
    @Test func P11_anIdentitysRecordsAreFoundByTheirCounterAndGoWithTheirPorts() throws {
        let identity = PortIdentity(origin: 0x5eed_0000_0000_0001, number: 21)
        let key = PortRegistry.Key(identity)
        #expect(key == PortRegistry.Key(identity))
        #expect(key.hashValue == PortRegistry.Key(identity).hashValue, "one identity, one hash")
        let fileA = FileKey(device: 0xfeed, inode: 1)
        let fileB = FileKey(device: 0xfeed, inode: 2)
        let fileC = FileKey(device: 0xfeed, inode: 3)
        func lookUp(_ file: FileKey) throws -> (port: PortCore?, isForged: Bool) {
            try PortRegistry.lookUp(key, slots: file) { () throws(SystemError) -> Int32 in
                Issue.record("no connection's maker is asked for a port received here")
                return 0
            }
        }
        var first: PortCore? = PortCore(identity: identity, name: PortName.next(), location: .local, registryKey: key)
        var second: PortCore? = PortCore(identity: identity, name: PortName.next(), location: .local)
        PortRegistry.register(try #require(first), key: key, slots: fileA, isProxy: false)
        PortRegistry.register(try #require(second), key: PortRegistry.Key(identity), slots: fileB, isProxy: false)
        #expect(try lookUp(fileA).port === first)
        #expect(try lookUp(fileB).port === second)
        #expect(try lookUp(fileC).isForged, "a counter no port of the identity holds")
        #expect(PortRegistry.everyPort(identity).count == 2)
        #expect(PortRegistry.recordCount(identity) == 2)

        first = nil
        #expect(try lookUp(fileA).port == nil)
        #expect(try lookUp(fileA).isForged, "the other port still stands for the identity")
        #expect(try lookUp(fileB).port === second, "the second record, moved first, still found")
        #expect(PortRegistry.everyPort(identity).count == 1)
        #expect(PortRegistry.recordCount(identity) == 1, "pruned with the key its import kept")

        // Registered again (a port that moved): one record, not two.
        PortRegistry.register(try #require(second), key: key, slots: fileB, isProxy: false)
        #expect(PortRegistry.recordCount(identity) == 1)

        second = nil
        let gone = try lookUp(fileB)
        #expect(gone.port == nil)
        #expect(!gone.isForged, "no record left of the identity")
        #expect(PortRegistry.recordCount(identity) == 0, "pruned with its identity hashed again")
    }

    /// A port is listed from when it is whole until its `deinit`.
    @Test func livePortsListAPortWhileItLives() {
        func listed(_ name: PortName) -> Bool {
            LivePorts.reading(limit: .max) { $0.name }.rows.contains(name)
        }
        var port: PortCore? = PortCore()
        let name = port!.name
        #expect(listed(name))
        port = nil
        #expect(!listed(name))
        let other = PortCore()
        #expect(listed(other.name), "a slot freed is taken again")
    }
}
