// Harbor — P10 across processes: a real harbord, the harbor CLI, and two uids.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct CrossProcessTests {
        /// P10: a service checks in through harbord in one process (this
        /// one); another process (the CLI) finds it by name and talks to it:
        /// a message with the sender's kernel credentials, and pings answered.
        @Test func P10_aServiceIsFoundByNameFromAnotherProcess() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess()
                #expect(harbord.waitUntilReady(), "harbord did not start: \(harbord.child.stderrSoFar)")
                let client = try harbord.client()
                let inbox = try client.checkIn("xp.echo")
                let sender = harbord.harbor(["send", "xp.echo", "hello", "across"])
                #expect(sender.exitCode() == 0)
                let message = try inbox.receive(timeout: .seconds(10))
                #expect(message.text == "hello across")
                #expect(message.trailer.sender.pid == sender.pid)

                let pinger = harbord.harbor(["ping", "xp.echo", "--count", "3"])
                for _ in 0..<3 {
                    var ping = try inbox.receive(timeout: .seconds(10))
                    #expect(ping.id == bootstrapPingID)
                    try ping.reply(Message(id: bootstrapPingID, body: ping.body))
                }
                #expect(pinger.exitCode() == 0)
                #expect(pinger.allStdout().contains("3 sent, 3 replies"))
                #expect(harbord.stop() == 0)
            }
        }

        /// P10: messages sent to a declared name before its service started
        /// wait for it: the CLI sends, exits; a second process checks in and
        /// gets the message.
        @Test func P10_messagesWaitForAServiceThatHasNotStarted() {
            expectNoDescriptorLeak {
                let harbord = HarbordProcess(policy: "declare later user=0\n")
                #expect(harbord.waitUntilReady())
                let early = harbord.harbor(["send", "later", "sent before the service existed"])
                #expect(early.exitCode() == 0)
                let service = harbord.harbor(["watch", "later", "--count", "1", "--idle", "10"])
                #expect(service.exitCode() == 0, "watch: \(service.stderrSoFar)")
                #expect(service.allStdout().contains("\"sent before the service existed\""))
                #expect(harbord.stop() == 0)
            }
        }

        /// P10: when the process holding a declared name is SIGKILLed, harbord
        /// takes the name back; the old send right is dead, a new look-up
        /// works at once and its messages wait for the next check-in.
        @Test func P10_aKilledHolderGivesTheNameBack() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(policy: "declare phoenix user=0\n")
                #expect(harbord.waitUntilReady())
                let holder = harbord.harbor(["watch", "phoenix"])
                #expect(holder.waitForStdout("watching phoenix"))
                let client = try harbord.client()
                let before = try client.lookUp("phoenix")
                kill(holder.pid, SIGKILL)
                _ = holder.waitForExit()
                #expect(sendFailure(before, "to the dead") == .deadName)
                let after = try client.lookUp("phoenix")
                try after.send(Message(id: 2, text: "to the next one"), timeout: .seconds(2))
                let next = try client.checkIn("phoenix")
                #expect(try next.receive(timeout: .seconds(5)).text == "to the next one")
                #expect(harbord.child.waitForStderr("is gone; the name waits for the next check-in"))
                #expect(harbord.stop() == 0)
            }
        }

        /// P10: names are scoped per uid by the kernel's credentials. A child
        /// running as `nobody` (65534) cannot see or take root's name (its
        /// check-in of the same name makes its own), sees and may look up a
        /// shared name, and may not check in a shared name root owns.
        @Test(.requiresRoot("to run a child as nobody")) func P10_namesAreScopedPerUserWithSharedNamesByPolicy() throws {
            try expectNoDescriptorLeak { () throws in
                let harbord = HarbordProcess(policy: "shared common owner=0\n")
                #expect(harbord.waitUntilReady())
                let client = try harbord.client()
                let mine = try client.checkIn("private")

                let lookUp = harbord.harbor(["lookup", "private"], asNobody: true)
                #expect(lookUp.exitCode() == 2, "nobody found root's name: \(lookUp.allStdout())")
                let list = harbord.harbor(["list"], asNobody: true)
                #expect(list.exitCode() == 0)
                let listed = list.allStdout()
                #expect(listed.contains("common") && !listed.contains("private"), "nobody's list: \(listed)")
                let shared = harbord.harbor(["lookup", "common"], asNobody: true)
                #expect(shared.exitCode() == 0)
                let takeShared = harbord.harbor(["watch", "common", "--idle", "1"], asNobody: true)
                #expect(takeShared.exitCode() == 5, "nobody checked in root's shared name")

                // nobody's own "private" is another name: root's messages never reach it.
                let theirs = harbord.harbor(["watch", "private", "--count", "1", "--idle", "2"], asNobody: true)
                #expect(theirs.waitForStdout("watching private"))
                try client.lookUp("private").send(Message(id: 3, text: "for root"), timeout: .seconds(2))
                #expect(try mine.receive(timeout: .seconds(5)).text == "for root")
                #expect(theirs.exitCode() == 4, "nobody's watch should time out empty: \(theirs.allStdout())")
                // And root's listing does not show nobody's names.
                #expect(try client.list().allSatisfy { $0.scope == .shared || $0.scope == .user(0) })
                #expect(harbord.stop() == 0)
            }
        }

        /// P10: looking up a declared name whose service is not running
        /// starts its unit (`PROGRAM start --no-block UNIT`; systemctl under
        /// systemd), once; the look-up itself is answered at once.
        @Test func P10_lookUpOfAStoppedServiceStartsItsUnit() throws {
            try expectNoDescriptorLeak { () throws in
                let scratch = TemporaryDirectory(prefix: "harbor-bs")
                let record = scratch.path + "/started"
                let starter = scratch.write("starter.sh", "#!/bin/sh\necho \"$@\" >> \(record)\n", mode: 0o755)
                // harbord runs its starter as the user it switched to (nobody here): let it write the record.
                _ = scratch.write("started", "", mode: 0o666)
                let harbord = HarbordProcess(policy: "declare lazy user=0 unit=lazy.service\n",
                                             extraArguments: ["--unit-starter", starter])
                #expect(harbord.waitUntilReady())
                let client = try harbord.client()
                let lazy = try client.lookUp("lazy")
                #expect(harbord.child.waitForStderr("activating lazy.service for lazy: \(starter) start --no-block lazy.service: done"))
                #expect(scratch.read("started") == "start --no-block lazy.service\n")
                try lazy.send(Message(id: 1, text: "wake up"), timeout: .seconds(2))
                let service = try client.checkIn("lazy")
                #expect(try service.receive(timeout: .seconds(5)).text == "wake up")
                #expect(harbord.stop() == 0)
            }
        }
    }
}

/// The code a send fails with, or nil if it succeeded.
func sendFailure(_ right: SendRight, _ text: String) -> PortError.Code? {
    do throws(PortError) {
        try right.send(Message(id: 1, text: text), timeout: .seconds(2))
        return nil
    } catch {
        return error.code
    }
}
