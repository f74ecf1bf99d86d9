// Harbor — harbord at scale: what a name costs it, and listings of any size.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite(.deadline(.seconds(120))) struct BootstrapScaleTests {
        /// P12: a name costs harbord the send right it answers look-ups with
        /// (two descriptors, charged to the name's owner, one per port however
        /// many names reach it), and a look-up costs harbord and the holder
        /// nothing new: every asker shares that right's connection. Measured
        /// in /proc/PID/fd of a real harbord and of the holding process: 500
        /// names checked in by one process, 100 registered by another, 50
        /// declared names first looked up (each then has a port in harbord)
        /// and then checked in, and 1,000 look-ups of one name kept.
        @Test func P12_aNameCostsHarbordItsOneRightAndALookUpCostsNothingNew() throws {
            let declared = (1...50).map { "declare d.\($0) user=\(geteuid())" }.joined(separator: "\n")
            let harbord = HarbordProcess(policy: declared + "\n")
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            #expect(try client.list().count == 50)
            let base = openDescriptors(of: harbord.child.pid)

            let holder = harbord.harbor(["hold", "a", "--count", "500"])
            #expect(holder.waitForStdout("holding 500 names", before: .now + .seconds(60)))
            let checkedIn = openDescriptors(of: harbord.child.pid) - base
            // Per name its port's right; one connection and one session for the process.
            #expect(checkedIn <= 2 * 500 + 8, "500 checked-in names cost harbord \(checkedIn) descriptors")

            let ports = (1...100).map { _ in HeldName(ReceiveRight()) }
            for (index, held) in ports.enumerated() { try client.register("r.\(index)", held.port.makeSendRight()) }
            let one = HeldName(ReceiveRight())
            for index in 0..<100 { try client.register("same.\(index)", one.port.makeSendRight()) }
            let registered = openDescriptors(of: harbord.child.pid) - base - checkedIn
            #expect(registered <= 2 * 101 + 6, "200 registered names of 101 ports cost harbord \(registered) descriptors")

            var looked: [SendRight] = []
            for index in 1...50 { looked.append(try client.lookUp("d.\(index)")) }
            let waiting = openDescriptors(of: harbord.child.pid) - base - checkedIn - registered
            let services = harbord.harbor(["hold"] + (1...50).map { "d.\($0)" })
            #expect(services.waitForStdout("holding 50 names", before: .now + .seconds(30)))
            // A handed-over port's right in harbord is the proxy the port left
            // behind, which keeps the port's eventfd and epoll set: four each.
            let handedOver = eventually {
                openDescriptors(of: harbord.child.pid) - base - checkedIn - registered <= 4 * 50 + 8
            }
            let left = openDescriptors(of: harbord.child.pid) - base - checkedIn - registered
            #expect(handedOver, "50 declared names, looked up then checked in, cost harbord \(left) descriptors (\(waiting) while waiting)")
            try looked[0].send(Message(id: 1, text: "to d.1"), timeout: .seconds(2))
            let listed = try client.list()
            #expect(listed.count == 750 && listed.allSatisfy { $0.state != .waiting })

            // Look-ups, kept: nothing new in harbord, nothing new in the holder.
            let harbordBefore = openDescriptors(of: harbord.child.pid)
            let holderBefore = openDescriptors(of: holder.pid)
            var kept: [SendRight] = []
            for _ in 0..<1_000 { kept.append(try client.lookUp("a.1")) }
            try kept[999].send(Message(id: 2, text: "to a.1"), timeout: .seconds(2))
            #expect(openDescriptors(of: harbord.child.pid) <= harbordBefore + 2, "1,000 look-ups cost harbord descriptors")
            #expect(openDescriptors(of: holder.pid) <= holderBefore + 2, "1,000 look-ups cost the holder descriptors")
            kill(holder.pid, SIGTERM)
            kill(services.pid, SIGTERM)
            _ = holder.waitForExit()
            _ = services.waitForExit()
            #expect(harbord.stop() == 0)
        }

        /// P10: `harbor list` shows 10,000 names (one 64 KiB reply held about
        /// 2,500): the listing comes in pages. The names are registered for
        /// one port, which costs harbord one right whatever their number.
        @Test func P10_harborListShowsTenThousandNames() throws {
            let harbord = HarbordProcess()
            #expect(harbord.waitUntilReady())
            let registrar = try harbord.client()
            let port = HeldName(ReceiveRight())
            let right = port.port.makeSendRight()
            for index in 0..<10_000 { try registrar.register("bulk.\(index)", right) }
            let start = ContinuousClock.now
            let listing = harbord.harbor(["list"])
            let printed = listing.allStdout()  // read as it comes: 10,000 lines fill a pipe
            let took = ContinuousClock.now - start
            #expect(listing.exitCode() == 0, "\(listing.stderrSoFar)")
            let lines = printed.split(separator: "\n")
            #expect(lines.count == 10_001, "harbor list printed \(lines.count) lines")
            #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("bulk.") && $0.contains("registered") })
            let entries = try harbord.client().list()
            #expect(entries.count == 10_000)
            #expect(entries.map(\.name) == entries.map(\.name).sorted(), "pages out of order")
            #expect(entries.first?.name == "bulk.0" && entries.last?.name == "bulk.9999")
            #expect(Set(entries.map(\.name)).count == 10_000, "a page repeated or skipped names")
            #expect(took < .seconds(10), "harbor list took \(took)")
            withExtendedLifetime(registrar) {}
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


