// harbor-xpc-probe — `methods NAME`: a listener routing method calls, its interface published.
import Glibc
import HarborXPC

/// The `methods` listener: `echo` (Ask → Answer), `check` (Ask → Answer,
/// throws ``Refusal`` for a negative `n`), plain `Ask` messages answered
/// too (the router's fallback).
enum Methods {
    static func run(_ name: String) -> Never {
        let listener: XPCListener
        do {
            let counter = Counter()
            // A method's handler gets its parameters only: uid and pid are the service's.
            let answer: @Sendable (Ask) -> Answer = { ask in
                Answer(n: ask.n, uid: getuid(), pid: getpid(), count: counter.next())
            }
            var methods = XPCMethodRouter(interface: name) { message in
                guard let ask = try? message.decode(as: Ask.self) else { return nil }
                return answer(ask)
            }
            try methods.add("echo", example: Ask(op: "echo", n: 0), reply: Answer(n: 0, uid: 0, pid: 0, count: 0)) { ask in
                answer(ask)
            }
            try methods.add("check", example: Ask(op: "check", n: 0), reply: Answer(n: 0, uid: 0, pid: 0, count: 0)) { ask in
                guard ask.n >= 0 else { throw Refusal(n: ask.n) }
                return answer(ask)
            }
            let router = methods
            listener = try XPCListener(service: name, interface: router.interface) { request in
                request.accept(methods: router)
            }
        } catch {
            line("error \(error.code.rawValue) \(error.reason)")
            exit(1)
        }
        line("ready \(listener.service)")
        while true { pause() }
    }
}
