// Harbor — one kind of waitset source (port, descriptor, process, signal, and a kind the loop has never
// seen), and no unchecked annotation on the run loop's public types (RL09, RL18, RL19, RL16).
import Foundation
import Glibc
import HarborPorts
@testable import HarborRunLoop
import HarborSystem
import HarborTestSupport
import Testing

/// A kind of source the run loop's files know nothing of, declared in this
/// one file as the `WaitsetSource` documentation says a new kind is: an
/// eventfd counter whose handler gets the count.
final class CounterSource: Sendable, CustomStringConvertible, WaitsetSource {
    let counter: EventDescriptor
    let order: Int
    let handler: @Sendable (UInt64) -> Void
    let membership = HarborLock(Memberships())
    private let valid = HarborLock(true)

    init(order: Int, _ handler: @escaping @Sendable (UInt64) -> Void) throws {
        counter = try EventDescriptor()
        self.order = order
        self.handler = handler
    }

    var isValid: Bool { valid.withLock { $0 } }
    func invalidate() {
        guard valid.withLock({ state -> Bool in defer { state = false }; return state }) else { return }
        leaveEveryLoop()
    }
    var waitDescriptor: CInt { counter.rawValue }
    var waitEvents: EpollEvents { .readable }
    var description: String { "CounterSource(order: \(order))" }

    func serve(_ events: EpollEvents, on loop: Loop, in mode: ModeState) -> Bool {
        guard isServed(by: loop, in: mode) else { return false }
        handler(counter.drain())
        return true
    }
}

extension Loop {
    func add(_ source: CounterSource, forMode mode: LoopMode) { add(.waitset(source), to: mode) }
    func remove(_ source: CounterSource, forMode mode: LoopMode) { remove(.waitset(source), from: mode) }
    func contains(_ source: CounterSource, inMode mode: LoopMode) -> Bool { contains(.waitset(source), mode) }
}

extension RunLoopTests {
    @Suite struct WaitsetSourceTests {
        @Test func RL09_RL18_RL19_portDescriptorAndProcessSourcesShareOneTableAndOneTokenKind() throws {
            onFreshThread {
                let loop = Loop.current
                let pipe = TestPipe()
                defer { Glibc.close(pipe.read); Glibc.close(pipe.write) }
                guard let child = spawnChild(["/bin/sleep", "30"]) else {
                    Issue.record("cannot spawn")
                    return
                }
                let port = try! PortSource(ReceiveRight()) { _ in }
                let descriptor = try! DescriptorSource(descriptor: pipe.read, events: .readable) { _ in }
                let process = try! ProcessSource(pid: child) { _ in }
                loop.add(port, forMode: .default)
                loop.add(descriptor, forMode: .default)
                loop.add(process, forMode: "other")
                let tokens: [WaitToken?] = [
                    port.membership.withLock { $0.membership(in: loop).token },
                    descriptor.membership.withLock { $0.membership(in: loop).token },
                    process.membership.withLock { $0.membership(in: loop).token },
                ]
                #expect(tokens.allSatisfy { $0?.kind == .source })
                #expect(Set(tokens.compactMap { $0?.slot }).count == 3)
                #expect(loop.state.withLock { $0.waitSlots.occupiedCount } == 3)
                #expect(loop.contains(process, inMode: "other") && !loop.contains(process, inMode: .default))
                // Each kind prints in its mode's one list of waitset sources.
                #expect(loop.description.contains("ProcessSource(pid \(child)"))
                try! process.sendSignal(SIGKILL)
                while process.isValid { _ = loop.run(mode: "other", timeout: .seconds(10), returnAfterSourceHandled: true) }
                port.invalidate()
                descriptor.invalidate()
                #expect(loop.state.withLock { $0.waitSlots.occupiedCount } == 0)
            }
        }

        @Test func RL09_RL18_aNewKindOfSourceIsOneFile_servedInOrderWithPorts_andItsStaleEventsDropped() throws {
            onFreshThread {
                let loop = Loop.current
                let log = EventLog()
                let counter = try! CounterSource(order: 1) { count in log.append("counter \(count)") }
                let port = try! PortSource(ReceiveRight(), order: 2) { message in log.append("port \(message.id)") }
                let early = try! CounterSource(order: 0) { count in log.append("early \(count)") }
                loop.add(counter, forMode: .default)
                loop.add(port, forMode: .default)
                loop.add(early, forMode: .default)
                // All three ready in one wait: served by order, whatever the kernel's order.
                try! port.makeSendRight().send(Message(id: 7))
                counter.counter.signal(2)
                early.counter.signal(1)
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true) == .handledSource)
                #expect(log.all == ["early 1", "counter 2", "port 7"])
                // Removed with an event still queued: the event's token is stale and dropped.
                let token = counter.membership.withLock { $0.membership(in: loop).token }!
                counter.counter.signal(1)
                loop.remove(counter, forMode: .default)
                #expect(!loop.contains(counter, inMode: .default))
                #expect(loop.state.withLock { $0.waitSlots.lookup(token) } == nil)
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: true) == .timedOut)
                #expect(log.all == ["early 1", "counter 2", "port 7"])
                port.invalidate()
                early.invalidate()
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: true) == .finished)
            }
        }

        /// `@unchecked Sendable` and `@exclusivity(unchecked)` say "the
        /// compiler cannot check this": they belong on internal types that say
        /// which lock makes them safe, never on a type users hold.
        @Test func RL16_noPublicTypeOfTheRunLoopCarriesAnUncheckedAnnotation() throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Sources/HarborRunLoop")
            let files = FileManager.default.enumerator(atPath: root.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
            #expect(files.count > 30)
            var offenders: [String] = []
            for file in files {
                let lines = try String(contentsOfFile: root.appendingPathComponent(file).path, encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                // The type a line belongs to: the last declaration at column 0.
                var enclosing = ""
                for line in lines {
                    if let first = line.first, first != " ", first != "/", first != "}" { enclosing = String(line) }
                    let unchecked = Self.annotations.contains { line.contains($0) }
                    guard unchecked, !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
                    let declaration = line.first == " " ? enclosing : String(line)
                    if declaration.hasPrefix("public ") || declaration.hasPrefix("open ") {
                        offenders.append("\(file): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
            #expect(offenders.isEmpty, "\(offenders)")
        }

        /// The annotations looked for, spelled apart so this file is not one of their users.
        private static let annotations = ["@unchecked" + " Sendable", "@exclusivity" + "(unchecked)"]
    }
}
