// Harbor — the Swift that Docs/Bootstrap.md, Coding.md, MachPort.md, Systemd.md and their DocC catalogs show,
// compiled (not run: the behaviour is each module's own tests').
// snippet: bootstrap-check-in
import HarborBootstrap
// end snippet
// snippet: coding-subscribe
import Harbor
import HarborCoding
// end snippet
// snippet: coding-subscribe-short
import Harbor
import HarborCoding
// end snippet
// snippet: mach-request-reply-typed
import HarborMach
import HarborPorts
// end snippet
import HarborSystemd
import SystemPackage

extension GuideSnippetSources {
    static func bootstrapCheckIn() throws {
        // snippet: bootstrap-check-in

        let bootstrap = try BootstrapClient()                    // finds harbord by itself
        let inbox = try bootstrap.checkIn("com.example.echo")    // the service: its receive right
        let echo = try bootstrap.lookUp("com.example.echo")      // any client: a send right
        try echo.send(Message(id: 1, text: "hello"))
        // end snippet
        _ = inbox
    }

    static func codingSubscribe(service: SendRight, replies: borrowing ReceiveRight, inbox: borrowing ReceiveRight) throws {
        struct Ack: Codable { var ok: Bool }
        // snippet: coding-subscribe

        struct Subscribe: Codable {
            var topic: String
            var events: SendRight               // a send right: copied into the message
            var cancel: ReceiveRightCarrier     // a receive right: moved
            var ack: SendOnceRightCarrier       // a send-once right: moved
            var snapshot: MemoryRegion?         // out-of-line memory
        }
        // end snippet
        let request = Subscribe(topic: "t", events: service, cancel: ReceiveRightCarrier(ReceiveRight()),
                                ack: SendOnceRightCarrier(replies.makeSendOnceRight()), snapshot: nil)
        // snippet: coding-subscribe

        var message = try MessageEncoder().encode(request, id: 3)
        message.setReplyRight(replies.makeSendOnceRight())    // the reply right stays the message's own
        try service.send(message)

        var received = try inbox.receive()
        let subscribe = try MessageDecoder().decode(Subscribe.self, from: &received)
        let cancel = try subscribe.cancel.take()              // the port is now this process's
        try received.reply(MessageEncoder().encode(Ack(ok: true), id: 4))
        // end snippet
        _ = cancel
    }

    static func codingSubscribeShort(service: SendRight, replies: borrowing ReceiveRight, inbox: borrowing ReceiveRight) throws {
        // snippet: coding-subscribe-short

        struct Subscribe: Codable {
            var topic: String
            var events: SendRight               // where to send the events
            var cancel: ReceiveRightCarrier     // a port the service owns from now on
            var ack: SendOnceRightCarrier       // one answer
        }
        // end snippet
        let request = Subscribe(topic: "t", events: service, cancel: ReceiveRightCarrier(ReceiveRight()),
                                ack: SendOnceRightCarrier(replies.makeSendOnceRight()))
        // snippet: coding-subscribe-short

        let message = try MessageEncoder().encode(request, id: 3)
        try service.send(message)

        // in the service:
        var received = try inbox.receive()
        let subscribe = try MessageDecoder().decode(Subscribe.self, from: &received)
        try subscribe.ack.take().send(Message(id: 4))
        // end snippet
    }

    static func codingFile(service: SendRight, inbox: borrowing ReceiveRight,
                           logPipe: (readEnd: FileDescriptor, writeEnd: FileDescriptor)) throws {
        // snippet: coding-file
        struct OpenLog: Codable {
            var name: String
            var output: FileDescriptorCarrier   // an open file: carried as itself
        }
        let log = OpenLog(name: "audit", output: try FileDescriptorCarrier(duplicating: logPipe.writeEnd))
        try service.send(MessageEncoder().encode(log, id: 1))

        // in the service:
        let output = try MessageDecoder().decode(OpenLog.self, from: inbox.receive()).output.take()
        defer { try? output.close() }
        _ = try output.writeAll("started\n".utf8)
        // end snippet
    }

    static func codingValues(subscription: SendRight, received: consuming Message) throws {
        typealias Subscription = SendRight
        // snippet: coding-values
        var writer = MessageValueWriter()
        try writer.append("subscribe")
        try writer.append(subscription)                     // rights and regions included
        let message = try writer.message(id: 7)

        var reader = try MessageValueReader(received)       // the whole body checked here
        let method = try reader.next(String.self)
        let subscription = try reader.next(Subscription.self)
        var rest = reader.finish()                          // the reply right is still in it
        // end snippet
        try rest.reply(Message(id: 8))
        _ = (method, subscription)
        _ = consume message
    }

    static func machRequestReplyTyped() throws {
        // snippet: mach-request-reply-typed

        let service = Mach.Port<Mach.ReceiveRight>()
        let replies = Mach.Port<Mach.ReceiveRight>()
        var request = Message(id: 7, text: "ping")
        request.setReplyRight(try replies.makeSendOnceRight().takeHarborRight())
        try service.makeSendRight().send(request)

        var received = try service.receive(timeout: .seconds(1))
        try received.reply(Message(id: 8, text: "pong"))
        print(try replies.receive(timeout: .seconds(1)).text)      // pong
        // end snippet
    }

    static func machLifetime() throws {
        // snippet: mach-lifetime
        let receive = Mach.Port<Mach.ReceiveRight>()
        let send = receive.makeSendRight()          // hand `send` out …
        try withExtendedLifetime(receive) {         // … the port lives until `}`
            try send.send(Message(id: 1), timeout: .zero)
        }
        // or: do the work, then end it where it should end:
        _ = consume receive
        // end snippet
    }

    static func systemdLoopInsideSDEvent() throws {
        // snippet: systemd-loop-inside-sd-event
        let event = try SDEventLoop()
        let nest = try LoopInsideSDEvent(loop: .current, mode: .default, event: event)
        try event.runUntilExit()      // Harbor timers, ports, blocks, sources fire meanwhile
        // end snippet
        _ = nest
    }

    static func systemdSDEventInsideLoop() throws {
        // snippet: systemd-sd-event-inside-loop
        let event = try SDEventLoop()
        let nest = try SDEventInsideLoop(event: event, loop: .current, mode: .default)
        Loop.current.run()            // sd-event's io, time, signal, defer, exit sources fire meanwhile
        // end snippet
        _ = nest
    }
}
