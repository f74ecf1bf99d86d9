// Harbor — the Swift that Docs/Ports.md, HarborPorts.docc and Harbor.docc's GettingStarted show, compiled
// (not run: SnippetTests runs Porting.md's; the behaviour is HarborPortsTests').
// snippet: ports-send-receive
import Harbor
// end snippet
// snippet: getting-started-request-reply
import Harbor
// end snippet

// The server and client functions Docs/Ports.md shows, at file scope as there.
// snippet: ports-request-reply
// Server: answer every request through its reply right.
func serve(_ inbox: borrowing ReceiveRight) throws(PortError) {
    while true {
        var request = try inbox.receive()
        try request.reply(Message(id: request.id + 1, text: "pong"))
    }
}

// Client.
func ask(_ service: SendRight, replies: borrowing ReceiveRight) throws(PortError) -> String {
    var request = Message(id: 7, text: "ping")
    request.setReplyRight(replies.makeSendOnceRight())   // MACH_MSG_TYPE_MAKE_SEND_ONCE
    try service.send(request)
    let reply = try replies.receive(timeout: .seconds(1))
    if reply.notification == .sendOnce(port: replies.name) { return "the server dropped the request" }
    return reply.text
}
// end snippet

extension GuideSnippetSources {
    static func portsSendReceive() throws {
        // snippet: ports-send-receive

        let port = ReceiveRight()                       // mach_port_allocate(MACH_PORT_RIGHT_RECEIVE)
        let send = port.makeSendRight()                 // MACH_MSG_TYPE_MAKE_SEND
        try send.send(Message(id: 1, text: "hello"))    // mach_msg(MACH_SEND_MSG)
        let message = try port.receive(timeout: .seconds(1))   // mach_msg(MACH_RCV_MSG | MACH_RCV_TIMEOUT)
        print(message.id, message.text, message.trailer.sequenceNumber, message.trailer.sender.pid)
        // end snippet
    }

    static func portsRequestReplyShort(service: SendRight) throws {
        let replies = ReceiveRight()
        // snippet: ports-request-reply-short
        var request = Message(id: 7, text: "ping")
        request.setReplyRight(replies.makeSendOnceRight())
        try service.send(request)
        let reply = try replies.receive(timeout: .seconds(1))
        // end snippet
        _ = reply
    }

    static func portsQueueLimit() throws {
        // snippet: ports-queue-limit
        let port = ReceiveRight()
        let send = port.makeSendRight()
        try port.setQueueLimit(1)                       // mach_port_set_attributes(MACH_PORT_LIMITS_INFO)
        try send.send(Message(id: 1), timeout: .zero)
        do {
            try send.send(Message(id: 2), timeout: .zero)   // try once: the queue is full
        } catch {
            // error.code == .queueFull; with a positive timeout it would be .timedOut
            if let unsent = error.takeUndeliveredMessage() { print("kept message", unsent.id) }
        }
        do {
            try send.send(Message(id: 3), timeout: .milliseconds(10))
        } catch {
            if error.code == .timedOut { print("still full after 10 ms") }
        }
        print(port.status.queuedMessages)               // mach_port_get_attributes: 1
        // end snippet
    }

    static func portsPortSet() throws {
        // snippet: ports-port-set
        let a = ReceiveRight(), b = ReceiveRight()
        let set = try PortSet()                         // mach_port_allocate(MACH_PORT_RIGHT_PORT_SET)
        try set.insert(a)                               // mach_port_insert_member
        try set.insert(b)
        try b.makeSendRight().send(Message(id: 9))
        let message = try set.receive(timeout: .seconds(1))
        print(message.trailer.port == b.name)           // true: which member it came from
        set.remove(a)                                   // mach_port_extract_member
        // end snippet
    }

    static func portsNotifications() throws {
        // snippet: ports-notifications
        let port = ReceiveRight()
        let notifications = ReceiveRight()
        var send: SendRight? = port.makeSendRight()
        port.requestNoSendersNotification(to: notifications.makeSendOnceRight())
        send?.requestDeadNameNotification(to: notifications.makeSendOnceRight())
        send = nil                                      // the last send right goes
        let note = try notifications.receive(timeout: .seconds(1))
        switch note.notification {
        case .noSenders(let about)?: print("no more senders to", about)
        case .deadName, .sendOnce, .portDestroyed: print("another notification")
        case nil: print("an ordinary message")
        }
        // end snippet
    }

    static func portsCarryRights() throws {
        // snippet: ports-carry-rights
        let port = ReceiveRight()
        let other = ReceiveRight()
        var message = Message(id: 3)
        message.attach(other.makeSendRight())           // MACH_MSG_TYPE_COPY_SEND
        message.attach(ReceiveRight())                  // MACH_MSG_TYPE_MOVE_RECEIVE
        try port.makeSendRight().send(message)
        var received = try port.receive()
        let send = try received.takeSendRight(at: 0)
        let moved = try received.takeReceiveRight(at: 1)
        print(send.name == other.name, moved.name)
        // end snippet
    }

    static func portsReadiness() throws {
        let port = ReceiveRight()
        // snippet: ports-readiness
        try port.withReadinessDescriptor { fd in
            print("watch", fd, "for POLLIN in your own event loop, then call tryReceive()")
        }
        while let message = port.tryReceive() { print(message.id) }
        // end snippet
    }

    static func gettingStartedRequestReply() throws {
        // snippet: getting-started-request-reply

        let inbox = ReceiveRight()                 // mach_port_allocate
        let service = inbox.makeSendRight()        // MAKE_SEND
        let replies = ReceiveRight()

        var request = Message(id: 7, text: "ping")
        request.setReplyRight(replies.makeSendOnceRight())   // one answer, at most
        try service.send(request, timeout: .zero)  // try once: .queueFull if full

        var received = try inbox.receive(timeout: .seconds(1))
        try received.reply(Message(id: 8, text: "pong"))
        print(try replies.receive().text)          // "pong"
        // end snippet
    }

    static func gettingStartedLoop() throws {
        // snippet: getting-started-loop
        let worker = LoopWorker(name: "echo")
        let inbox = ReceiveRight()
        let service = inbox.makeSendRight()
        let source = try PortSource(inbox) { message in
            print("got", message.id)
        }
        worker.perform { Loop.current.add(source, forMode: .default) }
        try service.send(Message(id: 1))
        // …
        worker.stop()                              // the loop returns and the thread exits
        // end snippet
    }

    static func gettingStartedAsync() async throws {
        let inbox = ReceiveRight()
        // snippet: getting-started-async
        for try await message in try inbox.messages() {
            print(message.text)
        }
        // end snippet
    }

    static func theRunLoopTimer() {
        // snippet: the-run-loop-timer
        let loop = Loop.current
        let timer = LoopTimer(after: .seconds(1), repeating: .seconds(1)) { timer in
            print("tick")
        }
        loop.add(timer, forMode: .common)
        loop.run(until: .now + .seconds(5))
        // end snippet
    }
}
