// Harbor — O06: harbord's metrics, scraped in the Prometheus text format from its metrics socket.
import Glibc
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct MetricsTests {
        /// O06: a real harbord started with `--metrics-socket` serves
        /// `GET /metrics` there (mode 0660): after look-ups, a refused
        /// look-up and a check-in over the uid's quota, the scrape counts
        /// them by request and reason, times them, and shows each tracked
        /// uid's use; a uid that goes loses its series; other paths get 404;
        /// a client that connects and sends nothing holds neither harbord's
        /// loop nor the next scrape for longer than its deadline; every series
        /// has a `# HELP` line before its `# TYPE` line.
        @Test func O06_harbordServesPrometheusMetricsOnItsSocket() throws {
            try expectNoDescriptorLeak { () throws in try servesMetrics() }
        }

        /// O06: a harbord without `--metrics-socket` listens on no stream
        /// socket (it opens nothing for metrics).
        @Test func O06_harbordWithoutTheOptionOpensNothing() {
            expectNoDescriptorLeak {
                let harbord = HarbordProcess()
                #expect(harbord.waitUntilReady())
                #expect(listeningStreamSockets(of: harbord.child.pid) == 0)
                #expect(harbord.stop() == 0)
            }
        }

        private func servesMetrics() throws {
            let scratch = TemporaryDirectory(prefix: "harbor-metrics")
            let socket = scratch.path + "/metrics.sock"
            let harbord = HarbordProcess(extraArguments: ["--metrics-socket", socket, "--max-names-per-uid", "1"])
            defer { if harbord.child.waitForExit(before: .now) == nil { kill(harbord.child.pid, SIGKILL); harbord.child.waitForExit() } }
            #expect(harbord.waitUntilReady(), "\(harbord.child.stderrSoFar)")
            var info = stat()
            #expect(stat(socket, &info) == 0 && info.st_mode & 0o777 == 0o660)
            #expect(listeningStreamSockets(of: harbord.child.pid) == 1)

            let uid = String(geteuid())
            let client = try harbord.client()
            let held = try client.checkIn("metrics.service")
            for _ in 0..<3 { _ = try client.lookUp("metrics.service") }
            #expect(code(of: { _ = try client.lookUp("metrics.nowhere") }) == .notFound)
            #expect(code(of: { _ = try client.checkIn("metrics.second") }) == .overQuota)

            let first = try #require(scrape(socket))
            #expect(first.status == "HTTP/1.0 200 OK", "\(first.status)")
            #expect(first.header.contains("Content-Type: text/plain; version=0.0.4"))
            let values = first.values
            #expect(values["harbor_bootstrap_requests_total{request=\"look_up\"}"] == 4, "\(first.body)")
            #expect(values["harbor_bootstrap_request_duration_seconds_count{request=\"look_up\"}"] == 4)
            #expect(values["harbor_bootstrap_refusals_total{reason=\"not_found\",request=\"look_up\"}"] == 1, "\(first.body)")
            #expect(values["harbor_bootstrap_refusals_total{reason=\"over_quota\",request=\"check_in\"}"] == 1)
            #expect(values["harbor_bootstrap_names"] == 1)
            #expect((values["harbor_bootstrap_clients"] ?? 0) >= 1)
            #expect(values["harbor_bootstrap_uid_usage{resource=\"names\",uid=\"\(uid)\"}"] == 1, "\(first.body)")
            #expect(values["harbor_bootstrap_uid_usage{resource=\"sessions\",uid=\"\(uid)\"}"] == 1)
            #expect((values["harbor_bootstrap_uid_usage{resource=\"descriptors\",uid=\"\(uid)\"}"] ?? 0) > 0)
            #expect(values["harbor_bootstrap_uid_limit{resource=\"names\"}"] == 1)
            #expect((values["harbor_bootstrap_connections_total"] ?? 0) >= 1)
            // Every series says what it is: a `# HELP` line before its `# TYPE` line.
            let lines = first.body.split(separator: "\n").map(String.init)
            let typed = lines.indices.filter { lines[$0].hasPrefix("# TYPE ") }
            #expect(typed.count >= 10, "\(first.body)")
            for index in typed {
                let name = lines[index].split(separator: " ")[2]
                #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) ") && lines[index - 1].count > "# HELP \(name) ".count + 10,
                        "no help for \(name)")
            }

            // Another uid's series come with it and go with it.
            if runsAsRoot {
                let other = harbord.harbor(["hold", "metrics.nobody", "--seconds", "30"], asNobody: true)
                #expect(eventually(5) {
                    scrape(socket)?.values["harbor_bootstrap_uid_usage{resource=\"names\",uid=\"65534\"}"] == 1
                })
                kill(other.pid, SIGKILL)
                other.waitForExit()
                #expect(eventually(5) { scrape(socket).map { !$0.body.contains("uid=\"65534\"") } ?? false },
                        "\(scrape(socket)?.body ?? "no scrape")")
            }

            #expect(scrape(socket, request: "GET /other HTTP/1.0\r\n\r\n")?.status == "HTTP/1.0 404 Not Found")

            // A client that connects and says nothing: harbord's loop goes on
            // serving, and the next scrape is answered once its deadline passes.
            let silent = connectStream(socket)
            #expect(silent >= 0)
            let lookUpStart = ContinuousClock.now
            _ = try client.lookUp("metrics.service")
            #expect(ContinuousClock.now - lookUpStart < .milliseconds(500))
            let waited = ContinuousClock.now
            let after = scrape(socket, timeout: .seconds(6))
            #expect(after?.status == "HTTP/1.0 200 OK")
            #expect(ContinuousClock.now - waited < .seconds(4))
            #expect(after?.values["harbor_bootstrap_requests_total{request=\"look_up\"}"] == 5)
            close(silent)

            // curl, if this machine has it.
            if access("/usr/bin/curl", X_OK) == 0 {
                let curl = Child(["/usr/bin/curl", "-sS", "--max-time", "5", "--unix-socket", socket, "http://localhost/metrics"],
                                 environment: baseEnvironment())
                #expect(curl.exitCode() == 0, "\(curl.stderrSoFar)")
                #expect(curl.allStdout().contains("harbor_bootstrap_requests_total{request=\"look_up\"} 5"))
            }

            withExtendedLifetime(held) {}
            #expect(harbord.stop() == 0)
        }
    }
}

/// One scrape's answer.
private struct Scrape {
    var status = ""
    var header = ""
    var body = ""

    /// Every sample: `name{labels sorted by name}` → value.
    var values: [String: Double] {
        var found: [String: Double] = [:]
        for line in body.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            var key = String(line[..<space])
            if let brace = key.firstIndex(of: "{"), key.hasSuffix("}") {
                let labels = key[key.index(after: brace)..<key.index(before: key.endIndex)].split(separator: ",").sorted()
                key = String(key[..<brace]) + "{" + labels.joined(separator: ",") + "}"
            }
            found[key] = value
        }
        return found
    }
}

/// A connected stream socket to `path`, or -1.
private func connectStream(_ path: String) -> CInt {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return -1 }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if connected != 0 {
        close(fd)
        return -1
    }
    return fd
}

/// Sends `request` to the metrics socket and reads the answer to its end.
private func scrape(_ path: String, request: String = "GET /metrics HTTP/1.0\r\nHost: harbord\r\n\r\n",
                    timeout: Duration = .seconds(5)) -> Scrape? {
    let fd = connectStream(path)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    let bytes = Array(request.utf8)
    guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else { return nil }
    let deadline = ContinuousClock.now + timeout
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return nil }
        var wait = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&wait, 1, Int32(max(1, left / .milliseconds(1)))) > 0 else { continue }
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { return nil }
        if count == 0 { break }
        answer += chunk[..<count]
    }
    let blank: [UInt8] = [13, 10, 13, 10]
    guard answer.count >= 4, let end = (0...answer.count - 4).first(where: { Array(answer[$0..<$0 + 4]) == blank }) else {
        return nil
    }
    var result = Scrape()
    result.header = String(decoding: answer[..<end], as: UTF8.self)
    result.status = String(result.header.prefix { $0 != "\r\n" })
    result.body = String(decoding: answer[(end + 4)...], as: UTF8.self)
    return result
}

/// How many listening `SOCK_STREAM` Unix sockets process `pid` holds
/// (its descriptors' socket inodes looked up in /proc/net/unix).
private func listeningStreamSockets(of pid: pid_t) -> Int {
    var inodes = Set<String>()
    guard let directory = opendir("/proc/\(pid)/fd") else { return -1 }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        var target = [CChar](repeating: 0, count: 256)
        let count = readlink("/proc/\(pid)/fd/\(name)", &target, 255)
        guard count > 0 else { continue }
        let link = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if link.hasPrefix("socket:[") { inodes.insert(String(link.dropFirst(8).dropLast())) }
    }
    guard let table = readSmallFile("/proc/\(pid)/net/unix") else { return -1 }
    // Num RefCount Protocol Flags Type St Inode Path: flags 00010000 is listening, type 0001 a stream.
    return table.split(separator: "\n").dropFirst().filter { line in
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        return fields.count >= 7 && fields[3] == "00010000" && fields[4] == "0001" && inodes.contains(String(fields[6]))
    }.count
}
