// Harbor — Porting.md's Mach snippets: ports, messages, a request and its reply (in one call too), notifications, a port on a run loop.
import Harbor

extension Snippets {
    /// mach_port_allocate, mach_msg send and receive, queue limits.
    static func machMessages(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: mach-messages
        let port = ReceiveRight()                                         // mach_port_allocate(task, MACH_PORT_RIGHT_RECEIVE, &port)
        let send = port.makeSendRight()                                   // mach_port_insert_right(…, MACH_MSG_TYPE_MAKE_SEND)
        try send.send(Message(id: 100, text: "hello"))                    // mach_msg(&header, MACH_SEND_MSG, …)
        let received = try port.receive(timeout: .seconds(1))             // mach_msg(…, MACH_RCV_MSG | MACH_RCV_TIMEOUT, …, 1000, …)
        print("msgh_id \(received.id): \(received.text), seqno \(received.trailer.sequenceNumber)")
        if let extra = port.tryReceive() {                                // MACH_RCV_TIMEOUT with 0 → MACH_RCV_TIMED_OUT
            print("unexpected \(extra.id)")
        } else {
            print("nothing waiting")
        }
        try port.setQueueLimit(1)                                         // mach_port_set_attributes(MACH_PORT_LIMITS_INFO)
        try send.send(Message(id: 1), timeout: .zero)
        do {
            try send.send(Message(id: 2), timeout: .zero)                 // MACH_SEND_TIMEOUT, 0 → MACH_SEND_TIMED_OUT
        } catch {
            if let unsent = error.takeUndeliveredMessage() { print("\(error.code): message \(unsent.id) given back") }
        }
        // end snippet
    }

    /// mach_msg(MACH_SEND_MSG | MACH_RCV_MSG): a request with a send-once reply right, then its reply.
    static func machRequestReply(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: mach-request-reply
        // The server, on its own run loop: receive, then send to msgh_remote_port.
        let server = LoopWorker(name: "server")
        let service = try PortSource(ReceiveRight()) { request in
            var request = request                                         // replying takes the reply right out of it
            try? request.reply(Message(id: request.id + 100, text: "pong"))   // mach_msg(&reply, MACH_SEND_MSG, …)
        }
        server.loop.add(service, forMode: .default)
        // The client: sendAndReceive's two halves, a send, then a receive on the reply port.
        let replyPort = ReceiveRight()
        var request = Message(id: 7, text: "ping")
        request.setReplyRight(replyPort.makeSendOnceRight())              // msgh_local_port, MACH_MSG_TYPE_MAKE_SEND_ONCE
        try service.makeSendRight().send(request)                         // mach_msg(MACH_SEND_MSG | MACH_RCV_MSG | MACH_RCV_TIMEOUT, …)
        let reply = try replyPort.receive(timeout: .seconds(1))
        print("reply \(reply.id): \(reply.text)")
        server.stop()
        service.invalidate()
        // end snippet
    }

    /// mach_msg(MACH_SEND_MSG | MACH_RCV_MSG) in one call: a reply port of the call's own, a reused one, each phase's timeout.
    static func machSendAndReceive(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: mach-send-and-receive
        let server = LoopWorker(name: "server")
        let service = try PortSource(ReceiveRight()) { request in
            var request = request
            try? request.reply(Message(id: request.id + 100, text: "pong to \(request.text)"))
        }
        server.loop.add(service, forMode: .default)
        let serverPort = service.makeSendRight()
        // mach_msg(&msg, MACH_SEND_MSG | MACH_RCV_MSG | MACH_SEND_TIMEOUT | MACH_RCV_TIMEOUT, …, reply_port, 1000, …)
        // with msgh_local_port = reply_port, MACH_MSG_TYPE_MAKE_SEND_ONCE: the reply port is the call's own.
        let reply = try serverPort.sendAndReceive(Message(id: 7, text: "ping"), timeout: .seconds(1))
        print("reply \(reply.id): \(reply.text)")
        // MIG's per-thread reply port: one port for many calls, the reply right set as msgh_local_port is.
        let replyPort = ReceiveRight()
        for id: Int32 in 1...2 {
            var request = Message(id: id, text: "call \(id)")
            request.setReplyRight(replyPort.makeSendOnceRight())
            let answer = try serverPort.sendAndReceive(request, replyPort: replyPort, timeout: .seconds(1))
            print("reply \(answer.id): \(answer.text)")
        }
        server.stop()
        service.invalidate()
        // The two timeouts: the error gives the request back only when the send failed.
        let busy = ReceiveRight()                                         // a server that never answers
        try busy.setQueueLimit(1)
        try busy.makeSendRight().send(Message(id: 0))                     // its queue is full
        for _ in 0..<2 {
            do {
                _ = try busy.makeSendRight().sendAndReceive(Message(id: 8), timeout: .milliseconds(10))
            } catch {
                if let unsent = error.takeUndeliveredMessage() {
                    print("MACH_SEND_TIMED_OUT: \(error.code), request \(unsent.id) given back, nothing received")
                } else {
                    print("MACH_RCV_TIMED_OUT: \(error.code), the request was sent")
                }
            }
            _ = busy.tryReceive()                                         // room for the next try
        }
        // end snippet
    }

    /// mach_port_request_notification: no-senders and dead-name.
    static func machNotifications(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: mach-notifications
        let notifyPort = ReceiveRight()
        // MACH_NOTIFY_NO_SENDERS: told when the last send right to `port` goes.
        let port = ReceiveRight()
        var send: SendRight? = port.makeSendRight()
        port.requestNoSendersNotification(to: notifyPort.makeSendOnceRight())
        send = nil                                                        // mach_port_deallocate(task, send)
        let noSenders = try notifyPort.receive(timeout: .seconds(1))
        print("no senders: \(noSenders.notification == .noSenders(port: port.name))")
        // MACH_NOTIFY_DEAD_NAME: told when the port a send right names dies.
        let service = ReceiveRight()
        let client = service.makeSendRight()
        let serviceName = service.name
        client.requestDeadNameNotification(to: notifyPort.makeSendOnceRight())
        service.destroy()                                                 // mach_port_mod_refs(…, MACH_PORT_RIGHT_RECEIVE, -1)
        let deadName = try notifyPort.receive(timeout: .seconds(1))
        print("dead name: \(deadName.notification == .deadName(port: serviceName)), client.isDead \(client.isDead)")
        // end snippet
        _ = send
    }

    /// CFMachPort / NSMachPort on a run loop: a port whose messages come to a callout.
    static func portSource(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: port-source
        let runLoop = Loop.current
        // CFMachPortCreate + CFMachPortCreateRunLoopSource; NSMachPort's delegate handleMachMessage:
        let source = try PortSource(ReceiveRight()) { source, message in
            print("handleMachMessage: \(message.id) \(message.text)")
            if message.id == 2 { source.invalidate() }                    // CFMachPortInvalidate, from its own callout
        }
        runLoop.add(source, forMode: .default)                            // [runLoop addPort:port forMode:NSDefaultRunLoopMode]
        let port = source.makeSendRight()                                 // what other threads and processes send with
        try port.send(Message(id: 1, text: "one"))                        // [port sendBeforeDate:… msgid:1 components:… from:nil reserved:0]
        try port.send(Message(id: 2, text: "two"))
        runLoop.run()                                                     // [runLoop run]: until the port leaves the mode
        print("run returned")
        // end snippet
    }
}
