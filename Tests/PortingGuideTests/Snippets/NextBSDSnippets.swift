// Harbor — Porting.md's port of NextBSD's bootstrap test pair (usr.bin/mach-tests/bootstrap): a server that checks in and answers, a client that looks it up and asks.
import Harbor
import HarborBootstrap

extension Snippets {
    /// bootstrap-server.c and bootstrap-client.c. `socketPath` is the test's
    /// own name server; real code writes `BootstrapClient()`, which finds harbord.
    static func nextBSDBootstrap(socketPath: String, print: @escaping @Sendable (String) -> Void) throws {
        // snippet: nextbsd-bootstrap
        // bootstrap-server.c: check in, then for (;;) { mach_msg_receive; answer "hello buddy" }
        let serverBootstrap = try BootstrapClient(socketPath: socketPath)   // task_get_special_port(TASK_BOOTSTRAP_PORT)
        let server = LoopWorker(name: "bootstrap-server")
        let service = try PortSource(serverBootstrap.checkIn("mach.service-test")) { message in  // bootstrap_check_in
            var message = message
            print("server: received message: body=\(message.text)")
            // reply.msgh_remote_port = message.msgh_remote_port, MACH_MSG_TYPE_COPY_SEND
            do { try message.reply(Message(id: 0, text: "hello buddy")) } catch { print("server: mach_msg_send failure: \(error)") }
        }
        server.loop.add(service, forMode: .default)                        // the for (;;) receive, on a run loop
        // bootstrap-client.c "hello"
        let bootstrap = try BootstrapClient(socketPath: socketPath)
        let port = try bootstrap.lookUp("mach.service-test")               // bootstrap_look_up(bootstrap_port, "mach.service-test", &port)
        let replyPort = ReceiveRight()                                     // mach_port_allocate(…, MACH_PORT_RIGHT_RECEIVE, &reply_port)
        var message = Message(id: 0, text: "hello")                        // strcpy(message.body, argv[1])
        message.setReplyRight(replyPort.makeSendRight())                   // msgh_local_port = reply_port, MACH_MSG_TYPE_MAKE_SEND
        let reply = try port.sendAndReceive(message, replyPort: replyPort, timeout: .seconds(5))  // mach_msg(SEND_MSG | RCV_MSG)
        print("client: sent message, reply body=\(reply.text)")
        server.stop()
        service.invalidate()
        // end snippet
    }
}
