// HarborXPC tests — sessions, listeners, requirements, death, shares (X01–X08).
import Glibc
import HarborBootstrap
import HarborSystem
import HarborTestSupport
@testable import HarborXPC
import Testing

extension XPCTests {
    @Suite struct Sessions {
        /// X01: a session looks a name up and reaches the listener in another
        /// process; sendSync, the reply handler and async all get the reply;
        /// the service sees the caller's kernel-verified uid and pid; each
        /// session has its own state (one port per session).
        @Test func X01_aSessionCallsAListenerInAnotherProcessWithEveryForm() async throws {
            let harbord = PrivateHarbord()
            let service = harbord.serve("com.example.x01")
            let bootstrap = try harbord.client()
            let session = try XPCSession(machService: "com.example.x01", bootstrap: bootstrap)
            try session.send(Ask(op: "echo", n: 0))                       // one-way: counted, unanswered
            let first = try session.sendSync(Ask(op: "echo", n: 7)).decode(as: Answer.self)
            #expect(first.n == 7 && first.uid == getuid() && first.pid == getpid())
            #expect(first.count == 2, "the one-way message reached the same session first")

            let handled = Latch<Result<Answer, XPCRichError>>()
            session.send(Ask(op: "echo", n: 8)) { (result: Result<Answer, any Error>) in
                handled.set(result.mapError { $0 as? XPCRichError ?? XPCRichError(.protocolViolation, "\($0)") })
            }
            #expect(try handled.wait()?.get().n == 8)
            let later: Answer = try await session.send(Ask(op: "echo", n: 9))
            #expect(later.n == 9 && later.count == 4)

            let other = try XPCSession(machService: "com.example.x01", bootstrap: bootstrap)
            #expect(try other.sendSync(Ask(op: "echo", n: 1)).decode(as: Answer.self).count == 1,
                    "a second session shares no state with the first")
            session.cancel(reason: "done")
            other.cancel(reason: "done")
            _ = service
        }

        /// X02: the listener decides each session on the peer's kernel-verified
        /// identity; a rejection is a typed error carrying the reason.
        @Test func X02_aListenerAcceptsOrRejectsOnThePeersIdentity() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let seen = Latch<ProcessIdentity>()
            let listener = try XPCListener(service: "com.example.x02", bootstrap: bootstrap) { request in
                seen.set(request.peer)
                return request.reject(reason: "pid \(request.peer.pid) may not")
            }
            do {
                _ = try XPCSession(machService: "com.example.x02", bootstrap: bootstrap)
                Issue.record("a rejected session opened")
            } catch {
                #expect(error.code == .sessionRejected && error.reason == "pid \(getpid()) may not")
            }
            #expect(seen.wait()?.pid == getpid() && seen.wait()?.uid == getuid())
            #expect(xpcCode { _ = try XPCSession(machService: "com.example.none", bootstrap: bootstrap) } == .serviceNotFound)
            listener.cancel()
        }

        /// X03: a peer requirement refuses a caller of another uid with a typed
        /// error at the caller, and admits one that meets it.
        @Test(.requiresRoot("to run a client as nobody"))
        func X03_aPeerRequirementRefusesAnotherUidWithATypedError() throws {
            let harbord = PrivateHarbord(policy: "shared com.example.x03 owner=0\n")
            let service = harbord.serve("com.example.x03", requirement: "same-user")
            let nobody = harbord.callAsNobody("com.example.x03", 5)
            let said = nobody.allStdout()
            #expect(said.hasPrefix("error peerRequirementNotMet"), "nobody's call: \(said)")
            let session = try XPCSession(machService: "com.example.x03", bootstrap: try harbord.client())
            #expect(try session.sendSync(Ask(op: "echo", n: 5)).decode(as: Answer.self).n == 5)
            session.cancel(reason: "done")
            _ = service
        }

        /// X03: a listener's requirement refuses the session request itself,
        /// and a session's requirement checks the service's answers (the
        /// session is then cancelled, its handler told why).
        @Test func X03_aListenersRequirementRefusesTheSessionAndASessionsChecksTheService() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let listener = try XPCListener(service: "com.example.x03b", requirement: .hasUserID(4242),
                                           bootstrap: bootstrap) { $0.accept { _ in Answer(n: 0, uid: 0, pid: 0, count: 0) } }
            #expect(xpcCode { _ = try XPCSession(machService: "com.example.x03b", bootstrap: bootstrap) }
                    == .peerRequirementNotMet)
            listener.cancel()

            let open = try XPCListener(service: "com.example.x03c", bootstrap: bootstrap) { request in
                request.accept { message in
                    message.senderSatisfies(.isFromSameUser()) ? Answer(n: 1, uid: 0, pid: 0, count: 0) : nil
                }
            }
            let cancelled = Latch<XPCRichError>()
            #expect(xpcCode {
                _ = try XPCSession(machService: "com.example.x03c", requirement: .hasUserID(4242), bootstrap: bootstrap,
                                   cancellationHandler: { cancelled.set($0) })
            } == .peerRequirementNotMet, "the service runs as another uid than the session requires")
            #expect(cancelled.wait()?.code == .peerRequirementNotMet)
            open.cancel()
        }

        /// X04: a SIGKILLed service fails a pending call with a typed error at
        /// once (a send-once notification, a dead name), never a timeout.
        @Test func X04_aKilledServiceFailsAPendingCallWithinARoundTrip() throws {
            let harbord = PrivateHarbord()
            let service = harbord.serve("com.example.x04")
            let session = try XPCSession(machService: "com.example.x04", bootstrap: try harbord.client())
            #expect(try session.sendSync(Ask(op: "echo", n: 1)).decode(as: Answer.self).n == 1)
            let failed = Latch<XPCRichError.Code?>()
            let caller = SystemThread.start {
                failed.set(xpcCode { _ = try session.sendSync(Ask(op: "hang", n: 0)) })
            }
            usleep(200_000)
            #expect(failed.wait(.zero) == nil, "the hanging call returned early")
            let killed = ContinuousClock.now
            kill(service.pid, SIGKILL)
            let code = failed.wait()
            let took = ContinuousClock.now - killed
            caller.join()
            #expect(code == .connectionInterrupted)
            #expect(took < .seconds(1), "the pending call took \(took) to fail")
        }

        /// X05: cancel(reason:) fails pending calls, runs the cancellation
        /// handler once with the reason, ends the listener's side (its handler
        /// runs), and every later call throws connectionInvalid.
        @Test func X05_cancelFailsPendingCallsAndRunsBothHandlers() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let serverEnded = Latch<XPCRichError>()
            let held = Latch<XPCReceivedMessage>()
            let listener = try XPCListener(service: "com.example.x05", bootstrap: bootstrap) { request in
                request.accept(incomingMessageHandler: { message in
                    held.set(message)
                    return nil
                }, cancellationHandler: { serverEnded.set($0) })
            }
            let clientEnded = Latch<XPCRichError>()
            let session = try XPCSession(machService: "com.example.x05", bootstrap: bootstrap,
                                         cancellationHandler: { clientEnded.set($0) })
            let failed = Latch<XPCRichError.Code?>()
            let caller = SystemThread.start { failed.set(xpcCode { _ = try session.sendSync(Ask(op: "hang", n: 0)) }) }
            #expect(held.wait() != nil)
            session.cancel(reason: "enough")
            #expect(failed.wait() == .connectionInvalid)
            caller.join()
            #expect(clientEnded.wait()?.reason == "cancelled: enough")
            #expect(serverEnded.wait()?.code == .connectionInvalid)
            #expect(xpcCode { try session.send(Ask(op: "echo", n: 0)) } == .connectionInvalid)
            listener.cancel()
        }

        /// X06: after its service dies, a session reconnects by itself: the
        /// pending call failed, the next call goes to the name's new instance.
        @Test func X06_aSessionReconnectsToTheNamesNextInstance() throws {
            let harbord = PrivateHarbord()
            var service = harbord.serve("com.example.x06")
            let session = try XPCSession(machService: "com.example.x06", bootstrap: try harbord.client())
            let before = try session.sendSync(Ask(op: "echo", n: 1)).decode(as: Answer.self)
            kill(service.pid, SIGKILL)
            _ = service.waitForExit()
            // The name goes with its holder; the next instance checks it in again.
            var code: XPCRichError.Code? = .connectionInterrupted
            while code == .connectionInterrupted {
                code = xpcCode { _ = try session.sendSync(Ask(op: "echo", n: 2)) }
            }
            service = harbord.serve("com.example.x06")
            let after = try session.sendSync(Ask(op: "echo", n: 3)).decode(as: Answer.self)
            #expect(after.n == 3 && after.count == 1, "a new session with the new instance")
            #expect(before.count == 1)
            session.cancel(reason: "done")
        }

        /// X07: a message the service releases without replying fails its
        /// caller with noReply at once, never a hang.
        @Test func X07_aMessageReleasedUnansweredFailsItsCaller() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let listener = try XPCListener(service: "com.example.x07", bootstrap: bootstrap) { request in
                request.accept { _ in nil }
            }
            let session = try XPCSession(machService: "com.example.x07", bootstrap: bootstrap)
            #expect(xpcCode { _ = try session.sendSync(Ask(op: "echo", n: 0)) } == .noReply)
            session.cancel(reason: "done")
            listener.cancel()
        }

        /// X08: each session costs the listener a port and a thread until its
        /// client lets it go, so one uid holds at most its share of a
        /// listener's sessions: past it a new one is rejected with a typed
        /// error, and a session let go makes room again.
        @Test func X08_aUidHoldsAtMostItsShareOfAListenersSessions() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let listener = try XPCListener(service: "com.example.x08", bootstrap: bootstrap) { request in
                request.accept { _ in nil }
            }
            var sessions: [XPCSession] = []
            for _ in 0..<SessionShares.perUid {
                sessions.append(try XPCSession(machService: "com.example.x08", bootstrap: bootstrap))
            }
            #expect(xpcCode { _ = try XPCSession(machService: "com.example.x08", bootstrap: bootstrap) } == .sessionRejected)
            sessions.removeLast().cancel(reason: "room")
            // The listener hears the session go (its port's no-senders) on its own thread.
            var opened: XPCSession?
            for _ in 0..<200 where opened == nil {
                opened = try? XPCSession(machService: "com.example.x08", bootstrap: bootstrap)
                if opened == nil { usleep(20_000) }
            }
            #expect(opened != nil, "a session let go makes room for another")
            opened?.cancel(reason: "done")
            for session in sessions { session.cancel(reason: "done") }
            listener.cancel()
        }
    }
}
