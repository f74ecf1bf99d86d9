// Harbor — harbord at scale: what a name costs it, and listings of any size.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite(.timeLimit(.minutes(2))) struct BootstrapScaleTests {
        /// P12: a name costs harbord at most one descriptor; in fact none
        /// while a service holds it (a checked-in name cost four). Measured in
        /// /proc/PID/fd of a real harbord: 500 names checked in by one process,
        /// 100 registered by another, and 50 declared names first looked up
        /// (each then has a port in harbord with a connection) and then
        /// checked in, which takes those ports and their descriptors away.
        @Test func P12_aNameCostsHarbordAtMostOneDescriptor() throws {
            let declared = (1...50).map { "declare d.\($0) user=\(geteuid())" }.joined(separator: "\n")
            let harbord = HarbordProcess(policy: declared + "\n")
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            #expect(try client.list().count == 50)
            let base = openDescriptors(of: harbord.child.pid)

            let holder = harbord.harbor(["hold", "a", "--count", "500"])
            #expect(holder.waitForStdout("holding 500 names", before: .now + .seconds(60)))
            let checkedIn = openDescriptors(of: harbord.child.pid) - base
            // One connection and one session for the holding process, whatever its names.
            #expect(checkedIn <= 8, "500 checked-in names cost harbord \(checkedIn) descriptors")

            let ports = (1...100).map { _ in HeldName(ReceiveRight()) }
            for (index, held) in ports.enumerated() { try client.register("r.\(index)", held.port.makeSendRight()) }
            let registered = openDescriptors(of: harbord.child.pid) - base - checkedIn
            #expect(registered <= 6, "100 registered names cost harbord \(registered) descriptors")

            var looked: [SendRight] = []
            for index in 1...50 { looked.append(try client.lookUp("d.\(index)")) }
            let waiting = openDescriptors(of: harbord.child.pid) - base - checkedIn - registered
            let services = harbord.harbor(["hold"] + (1...50).map { "d.\($0)" })
            #expect(services.waitForStdout("holding 50 names", before: .now + .seconds(30)))
            let handedOver = eventually { openDescriptors(of: harbord.child.pid) - base - checkedIn - registered <= 8 }
            let left = openDescriptors(of: harbord.child.pid) - base - checkedIn - registered
            #expect(handedOver, "50 declared names, looked up then checked in, still cost harbord \(left) descriptors (\(waiting) while waiting)")
            try looked[0].send(Message(id: 1, text: "to d.1"), timeout: .seconds(2))
            let listed = try client.list()
            #expect(listed.count == 650 && listed.allSatisfy { $0.state != .waiting })
            kill(holder.pid, SIGTERM)
            kill(services.pid, SIGTERM)
            _ = holder.waitForExit()
            _ = services.waitForExit()
            #expect(harbord.stop() == 0)
        }

        /// P10: `harbor list` shows 10,000 names (one 64 KiB reply held about
        /// 2,500): the listing comes in pages; two processes hold 5,000 each.
        @Test func P10_harborListShowsTenThousandNames() throws {
            let harbord = HarbordProcess()
            #expect(harbord.waitUntilReady())
            let holders = (0..<2).map { part in
                harbord.harbor(["hold", "bulk.\(part)", "--count", "5000"])
            }
            for holder in holders {
                #expect(holder.waitForStdout("holding 5000 names", before: .now + .seconds(90)), "\(holder.stderrSoFar)")
            }
            let start = ContinuousClock.now
            let listing = harbord.harbor(["list"])
            let printed = listing.allStdout()  // read as it comes: 10,000 lines fill a pipe
            let took = ContinuousClock.now - start
            #expect(listing.exitCode() == 0, "\(listing.stderrSoFar)")
            let lines = printed.split(separator: "\n")
            #expect(lines.count == 10_001, "harbor list printed \(lines.count) lines")
            #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("bulk.") && $0.contains("active") })
            let entries = try harbord.client().list()
            #expect(entries.count == 10_000)
            #expect(entries.map(\.name) == entries.map(\.name).sorted(), "pages out of order")
            #expect(entries.first?.name == "bulk.0.1" && entries.last?.name == "bulk.1.999")
            #expect(Set(entries.map(\.name)).count == 10_000, "a page repeated or skipped names")
            #expect(took < .seconds(10), "harbor list took \(took)")
            for holder in holders { kill(holder.pid, SIGTERM) }
            for holder in holders { _ = holder.waitForExit() }
            #expect(harbord.stop() == 0)
        }
    }
}

/// The descriptors process `pid` has open.
func openDescriptors(of pid: pid_t) -> Int {
    guard let directory = opendir("/proc/\(pid)/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        if entry.pointee.d_name.0 != 0x2E { count += 1 }  // not "." or ".."
    }
    return count
}


