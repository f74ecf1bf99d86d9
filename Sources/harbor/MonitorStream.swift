// Harbor — the receiving end of `harbor monitor` and `harbor capture`: the records a name's holder
// forwards, read until a count, a time, a signal or the end of the name's port.
import Glibc
import HarborBootstrap
import HarborCapture
import HarborPorts

/// A port of this process that a name's holder sends its tap's records to
/// (`BootstrapClient.monitor`), and the loop that reads them.
///
/// The holder forwards while this port lives: exiting (or dropping the
/// stream) ends its forwarding thread within half a second.
final class MonitorStream {
    /// The name monitored, as given.
    let name: String
    /// The holder, as the kernel reported the process that answered.
    let pid: pid_t
    /// The tapped port's number in the holder.
    let port: UInt64
    private let receiver: ReceiveRight

    /// What the holder's closing summary says, when the name's port died.
    struct Summary {
        var admitted: UInt64
        var dropped: UInt64
        var lost: UInt64
    }

    /// Asks the holder of `name` to tap it and forward here.
    init(name: String, uid: uid_t?, bodyPrefix: Int, client: BootstrapClient) throws(CommandFailure) {
        self.name = name
        receiver = ReceiveRight()
        try? receiver.setQueueLimit(256)
        do {
            (pid, port) = try client.monitor(name, uid: uid, bodyPrefix: bodyPrefix, sendingTo: receiver.makeSendRight())
        } catch {
            throw CommandFailure(error, name: name)
        }
        // The holder holds the only send right now: when it stops forwarding
        // (its process died, say) without a summary, this port hears it.
        receiver.requestNoSendersNotification(to: receiver.makeSendOnceRight())
    }

    /// Reads records, calling `each` for every one, until `count` records,
    /// `seconds` have passed, SIGINT, SIGTERM or SIGHUP (blocked here and
    /// taken), or the holder's closing summary (the name's port died),
    /// which it returns.
    /// - Throws: exit 3 when the holder stops forwarding without a summary
    ///   (its process died, say: the port's no-senders notification).
    func run(count: Int?, seconds: Double?, _ each: (PortCaptureRecord) throws(CommandFailure) -> Void)
        throws(CommandFailure) -> Summary?
    {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let end = seconds.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        var seen = 0
        while count.map({ seen < $0 }) ?? true {
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            if sigtimedwait(&signals, nil, &zero) > 0 { return nil }
            if let end, ContinuousClock.now >= end { return nil }
            let message: Message
            do { message = try receiver.receive(timeout: .milliseconds(200)) } catch where error.code == .timedOut {
                continue
            } catch {
                throw CommandFailure("\(name): \(error.detail)", code: 3)
            }
            if case .noSenders? = message.notification {
                throw CommandFailure("\(name): pid \(pid) stopped forwarding (it exited, or died)", code: 3)
            }
            // Only the holder speaks here: anything else is passed over.
            guard message.trailer.sender.pid == pid, message.notification == nil else { continue }
            if let summary = PortMonitor.summary(in: message) {
                return Summary(admitted: summary.admitted, dropped: summary.dropped, lost: summary.lost)
            }
            let records: [PortCaptureRecord]
            do { records = try PortMonitor.records(in: message) } catch {
                throw CommandFailure("\(name): pid \(pid) sent a batch that does not decode: \(error)", code: 3)
            }
            for record in records {
                try each(record)
                seen += 1
                if let count, seen >= count { return nil }
            }
        }
        return nil
    }
}
