// Harbor — the Swift that Docs/XPC.md and HarborXPC's DocC catalog show,
// compiled (not run: the behaviour is HarborXPCTests').
// snippet: xpc-overview
import HarborXPC
// end snippet
// snippet: xpc-docc-overview
import HarborXPC
// end snippet
// snippet: xpc-subscriptions
import HarborXPC
// end snippet
// snippet: xpc-interfaces
import HarborXPC
// end snippet
// snippet: xpc-targets
import Dispatch
import HarborRunLoop
import HarborXPC
// end snippet

extension GuideSnippetSources {
    struct Tick: Codable {}
    struct Ask: Codable { var offset: Int }
    struct Now: Codable { var seconds: Int }

    actor ClockActor {
        func now(offset: Int) -> Now { Now(seconds: 42 + offset) }
    }

    static func xpcTargets() throws {
        // snippet: xpc-targets

        // A dispatch queue, as XPC's targetQueue:
        let queue = DispatchQueue(label: "com.example.clock")
        let listener = try XPCListener(service: "com.example.clock", targetQueue: queue) { request in
            request.accept { message in
                dispatchPrecondition(condition: .onQueue(queue))
                return Now(seconds: 42)
            }
        }

        // A run loop: handlers run on its thread, beside its timers and sources.
        let worker = LoopWorker(name: "clock")
        let session = try XPCSession(machService: "com.example.clock", target: .loop(worker.loop)) { error in
            print("ended: \(error)")                                  // on the worker's thread
        }
        session.send(Ask(offset: 1)) { (result: Result<Now, any Error>) in print(result) }   // there too

        // Swift concurrency: an async handler may await an actor.
        let clock = ClockActor()
        let concurrent = try XPCListener(service: "com.example.clock2") { request in
            request.accept { message async -> (any Encodable & Sendable)? in
                guard let ask = try? message.decode(as: Ask.self) else { return nil }
                return await clock.now(offset: ask.offset)
            }
        }
        // end snippet
        _ = (listener, session, concurrent)
    }

    static func xpcOverview() async throws {
        // snippet: xpc-overview

        let listener = try XPCListener(service: "com.example.clock",
                                       requirement: .isFromSameUser()) { request in
            request.accept { message in
                guard let ask = try? message.decode(as: Ask.self) else { return nil }
                return Now(seconds: 42 + ask.offset)        // the reply
            }
        }

        let session = try XPCSession(machService: "com.example.clock")
        try session.send(Tick())                                          // one-way
        let now = try session.sendSync(Ask(offset: 1)).decode(as: Now.self)
        session.send(Ask(offset: 2)) { (result: Result<Now, any Error>) in print(result) }
        let later: Now = try await session.send(Ask(offset: 3))
        session.cancel(reason: "done")
        // end snippet
        _ = (listener, now, later)
    }

    static func xpcDoccOverview() async throws {
        // snippet: xpc-docc-overview

        struct Ask: Codable { var offset: Int }
        struct Now: Codable { var seconds: Int }

        // The service.
        let listener = try XPCListener(service: "com.example.clock",
                                       requirement: .isFromSameUser()) { request in
            request.accept { message in
                guard let ask = try? message.decode(as: Ask.self) else { return nil }
                return Now(seconds: 42 + ask.offset)
            }
        }

        // A client.
        let session = try XPCSession(machService: "com.example.clock")
        let now = try session.sendSync(Ask(offset: 1)).decode(as: Now.self)
        let later: Now = try await session.send(Ask(offset: 2))
        session.cancel(reason: "done")
        // end snippet
        _ = (listener, now, later)
    }

    struct Subscribe: Codable {}
    struct Clock: Codable { var seconds: Int }

    static func xpcSubscriptions(seconds: Int) async throws {
        // snippet: xpc-subscriptions

        // The service: `now` answers once, `subscribe` streams a tick a second.
        let ticks = try XPCPublisher<Clock>(policy: .dropOldest(keep: 8))
        let listener = try XPCListener(service: "com.example.clock") { request in
            request.accept { message in
                if message.isSubscriptionRequest {        // from session.subscribe(_:as:)
                    try? ticks.subscribe(message)         // a port per subscriber; answers it
                    return nil
                }
                return Clock(seconds: seconds)            // `now`
            }
        }
        ticks.publish(Clock(seconds: seconds))            // each second; never waits

        // A client.
        let session = try XPCSession(machService: "com.example.clock")
        let now = try session.sendSync(Ask(offset: 0)).decode(as: Clock.self)
        let stream = try session.subscribe(Subscribe(), as: Clock.self)
        for try await tick in stream { print(tick.seconds) }   // ends with a typed error if the service dies
        // end snippet
        _ = (listener, now)
    }

    enum ClockError: Error { case negative }

    static func xpcInterfaces(session: XPCSession) throws {
        // snippet: xpc-interfaces

        var methods = XPCMethodRouter(interface: "com.example.clock") { message in
            nil                                          // messages that are not method calls (optional)
        }
        try methods.add("now", example: Ask(offset: 0), reply: Now(seconds: 0)) { ask in
            guard ask.offset >= 0 else { throw ClockError.negative }   // an error reply
            return Now(seconds: 42 + ask.offset)
        }
        let router = methods
        let listener = try XPCListener(service: "com.example.clock", interface: router.interface) { request in
            request.accept(methods: router)
        }

        // A Swift client calls by name too:
        let now = try session.sendSync(XPCMethodCall(method: "now", parameters: Ask(offset: 1))).decode(as: Now.self)
        // end snippet
        _ = (listener, now)
    }
}
