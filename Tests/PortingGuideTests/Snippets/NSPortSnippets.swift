// Harbor — Porting.md's NSPort snippets: NSPortMessage, finding one's own port again, the NSMachPort thread demo.
import Harbor
import Synchronization

extension Snippets {
    /// NSPortMessage: msgid, components (data and ports), sendPort and receivePort.
    static func portMessage(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: port-message
        let runLoop = Loop.current
        // The receivePort: where the answer comes, on this thread's loop.
        let replies = try PortSource(ReceiveRight()) { source, message in
            print("answer \(message.id): \(message.text)")
            source.invalidate()
        }
        runLoop.add(replies, forMode: .default)
        // The other side's delegate: handlePortMessage: gets one Message.
        let server = LoopWorker(name: "server")
        let service = try PortSource(ReceiveRight()) { message in
            var message = message
            let data = message.text                                       // an NSData component: the body
            let ports = message.carriedRights.count                       // NSPort components: carried rights
            let extra = try? message.takeSendRight(at: 0)                 // [[portMessage components] objectAtIndex:1]
            guard let sendPort = message.takeReplyRight() else { return } // [portMessage sendPort]: where to answer
            let answer = Message(id: message.id, text: "\(data), \(ports) port, \(extra?.isDead == false ? "alive" : "dead")")
            try? sendPort.send(answer)                                    // [answer sendBeforeDate:…]
        }
        server.loop.add(service, forMode: .default)
        // [[NSPortMessage alloc] initWithSendPort:servicePort receivePort:replies components:@[data, port]]
        var message = Message(id: 42, text: "data")                       // setMsgid:42, the NSData component
        message.attach(replies.makeSendRight())                           // an NSPort component
        message.setReplyRight(replies.makeSendRight())                    // receivePort: the answer's way back
        try service.makeSendRight().send(message)                         // [message sendBeforeDate:[NSDate date]]
        runLoop.run()                                                     // until the answer invalidates `replies`
        server.stop()
        service.invalidate()
        // end snippet
    }

    /// What replaces NSMachPort's per-process uniquing: a table keyed by the port's name.
    static func ownPortAgain(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: own-port-again
        // +[NSMachPort portWithMachPort:] gave back this process's own NSPort object;
        // a received right gives its port's name, and a table keyed by it finds the source.
        let mine = try PortSource(ReceiveRight()) { _ in }
        let sourcesByName = Mutex<[PortName: PortSource]>([:])
        sourcesByName.withLock { $0[mine.portName] = mine }
        let courier = ReceiveRight()
        var message = Message(id: 1)
        message.attach(mine.makeSendRight())                              // the port travels as a component
        try courier.makeSendRight().send(message)
        var received = try courier.receive(timeout: .seconds(1))
        let right = try received.takeSendRight(at: 0)
        let found = sourcesByName.withLock { $0[right.name] }             // not a new object: a lookup
        print("found my own source: \(found === mine), same port: \(right == mine.makeSendRight())")
        mine.invalidate()
        // end snippet
    }

    /// The widely copied NSMachPort demo: a main thread and a worker exchanging
    /// messages over two ports, each on its own thread's run loop, three rounds.
    static func machPortDemo(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: nsmachport-demo
        let checkIn: Int32 = 100, exit: Int32 = 999, rounds: Int32 = 3
        // The main thread's port and its delegate's handlePortMessage:
        let mainPort = try PortSource(ReceiveRight()) { mainPort, message in
            var message = message
            print("main: msgid \(message.id), \(message.text)")
            guard let workerPort = message.takeReplyRight() else { return }  // [portMessage sendPort]
            let round = message.id == checkIn ? 1 : message.id + 1
            var next = round <= rounds ? Message(id: round, text: "round \(round)") : Message(id: exit, text: "exit")
            next.setReplyRight(mainPort.makeSendRight())                  // initWithSendPort:workerPort receivePort:mainPort
            try? workerPort.send(next)                                    // sendBeforeDate:
            if round > rounds { mainPort.invalidate() }                   // done: the main run ends
        }
        Loop.current.add(mainPort, forMode: .default)                     // [[NSRunLoop currentRunLoop] addPort:myPort forMode:…]
        let mainSendRight = mainPort.makeSendRight()
        // [NSThread detachNewThreadSelector:@selector(launchThreadWithPort:) toTarget:… withObject:myPort]
        let worker = LoopThread(name: "worker") {
            guard let myPort = try? PortSource(ReceiveRight(), { myPort, message in   // the worker's handlePortMessage:
                var message = message
                print("worker: msgid \(message.id), \(message.text)")
                if message.id == exit { return myPort.invalidate() }      // shouldExit
                guard let mainPort = message.takeReplyRight() else { return }
                var reply = Message(id: message.id, text: "reply to round \(message.id)")
                reply.setReplyRight(myPort.makeSendRight())
                try? mainPort.send(reply)
            }) else { return }
            Loop.current.add(myPort, forMode: .default)
            var checkInMessage = Message(id: checkIn, text: "check in")   // sendCheckinMessage:
            checkInMessage.setReplyRight(myPort.makeSendRight())          // receivePort:myPort
            try? mainSendRight.send(checkInMessage)
            while myPort.isValid {                                        // do { runMode:beforeDate: } while (!shouldExit)
                Loop.current.run(mode: .default, before: nil)
            }
        }
        worker.start()
        Loop.current.run()                                                // the main thread's [[NSRunLoop currentRunLoop] run]
        worker.join()
        print("worker finished: \(worker.isFinished)")
        // end snippet
    }
}
