// swift-tools-version: 6.1
// Harbor: Mach-style message ports and CFRunLoop-style run loops for Linux.
//
// Layers, lowest first; a layer never imports one above it:
//   CHarborLinux (C shim) → HarborSystem (typed system calls, the shim's only
//   importer) → HarborPorts (rights, messages, ports) → HarborTransport (ports
//   across processes) → HarborRunLoop
//   → Harbor (umbrella). CSystemd wraps libsystemd for the layers that need it.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Harbor",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Harbor", targets: ["Harbor"]),
        .library(name: "HarborPorts", targets: ["HarborPorts"]),
        .library(name: "HarborTransport", targets: ["HarborTransport"]),
        .library(name: "HarborRunLoop", targets: ["HarborRunLoop"]),
        .library(name: "HarborFoundation", targets: ["HarborFoundation"]),
        .library(name: "HarborSystemd", targets: ["HarborSystemd"]),
        .executable(name: "harbor-demo", targets: ["harbor-demo"]),
        .executable(name: "harbor-seeds", targets: ["harbor-seeds"]),
        .library(name: "HarborBootstrap", targets: ["HarborBootstrap"]),
        .library(name: "HarborMach", targets: ["HarborMach"]),
        .library(name: "HarborCoding", targets: ["HarborCoding"]),
        .library(name: "HarborXPC", targets: ["HarborXPC"]),
        .library(name: "HarborDistributed", targets: ["HarborDistributed"]),
        .library(name: "HarborCapture", targets: ["HarborCapture"]),
        .executable(name: "harbord", targets: ["harbord"]),
        .executable(name: "harbor", targets: ["harbor"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // The name server, its daemon and the CLI (HarborBootstrap, harbord, harbor).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Metrics: the libraries report through swift-metrics; harbord serves
        // them in Prometheus text format (`--metrics-socket`, Docs/harbord.md).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation` for the DocC catalogs (Scripts/docs.sh).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Layer 0: the C shim. No logic, only what Glibc does not import.
        .target(
            name: "CHarborLinux",
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // libsystemd's headers, found through pkg-config (Scripts/install-deps.sh).
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // Layer 1: typed system calls, the only importer of the C shim.
        .target(
            name: "HarborSystem",
            dependencies: [
                "CHarborLinux",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        // Layer 2: the port/message kernel: rights, messages, the state
        // machine, sets, notifications, admission. No sockets.
        .target(
            name: "HarborPorts",
            dependencies: [
                "HarborSystem",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // Layer 2b: ports across processes: the transport, the wire format,
        // spawning. Implements HarborPorts' PortConnections and PortRoute.
        .target(
            name: "HarborTransport",
            dependencies: [
                "HarborPorts", "HarborSystem",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // A port's traffic as records and pcapng files: the capture record's
        // bytes and the pcapng writer over HarborPorts' PortTap (Docs/Capture.md).
        .target(
            name: "HarborCapture",
            dependencies: ["HarborPorts", "HarborSystem"],
            swiftSettings: strict
        ),
        // Layer 3: CFRunLoop's semantics over an epoll waitset.
        .target(
            name: "HarborRunLoop",
            dependencies: [
                "HarborPorts",
                "HarborSystem",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // NSRunLoop's and NSTimer's Date and TimeInterval forms over the run
        // loop, for Foundation code; the core stays free of Foundation.
        .target(
            name: "HarborFoundation",
            dependencies: ["HarborRunLoop"],
            swiftSettings: strict
        ),
        // swift-system's Darwin `Mach.Port<RightType>` API and the `mach_port_*`
        // name calls, over Harbor's rights (Docs/MachPort.md).
        .target(
            name: "HarborMach",
            dependencies: ["HarborPorts"],
            swiftSettings: strict
        ),
        // Codable values as messages: a compact, versioned binary body, with
        // rights and out-of-line regions as fields carried as real rights and
        // regions (Docs/Coding.md).
        .target(
            name: "HarborCoding",
            dependencies: ["HarborPorts", "HarborSystem"],
            swiftSettings: strict
        ),
        // Apple's Swift XPC API (XPCListener, XPCSession, XPCReceivedMessage,
        // XPCPeerRequirement) over Harbor ports and harbord names (Docs/XPC.md);
        // handlers may run on a run loop (XPCHandlerTarget), hence HarborRunLoop.
        .target(
            name: "HarborXPC",
            dependencies: ["HarborCoding", "HarborBootstrap", "HarborPorts", "HarborRunLoop", "HarborSystem"],
            swiftSettings: strict
        ),
        // Swift distributed actors across threads and processes: actor ids
        // are ports, calls are messages with send-once replies, harbord
        // names resolve actors (Docs/Distributed.md).
        .target(
            name: "HarborDistributed",
            dependencies: ["HarborCoding", "HarborBootstrap", "HarborPorts", "HarborSystem"],
            swiftSettings: strict
        ),
        // The distributed actor the HarborDistributed tests and
        // harbor-actor-probe share (one module, so both name its functions
        // alike); no library product.
        .target(
            name: "HarborDistributedProbe",
            dependencies: ["HarborDistributed", "HarborSystem"],
            swiftSettings: strict
        ),
        // Layer 4: sd-event nesting both ways, sd_notify, socket activation.
        .target(
            name: "HarborSystemd",
            dependencies: ["HarborRunLoop", "HarborPorts", "CSystemd", "HarborSystem"],
            swiftSettings: strict
        ),
        // The umbrella module users import.
        .target(
            name: "Harbor",
            dependencies: ["HarborTransport", "HarborPorts", "HarborRunLoop", "HarborSystemd"],
            swiftSettings: strict
        ),
        // Layer 5: the bootstrap name server's protocol, client and server logic (P10).
        .target(
            name: "HarborBootstrap",
            dependencies: ["HarborTransport", "HarborPorts", "HarborRunLoop", "HarborSystem", "HarborCapture",
                           .product(name: "CoreMetrics", package: "swift-metrics")],
            swiftSettings: strict
        ),
        // The name server daemon (S04): HarborBootstrap's server under systemd.
        .executableTarget(
            name: "harbord",
            dependencies: ["HarborTransport", 
                "HarborBootstrap", "HarborRunLoop", "HarborSystemd", "HarborSystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // The command-line tool: lookup, list, send, ping, watch, introspect, call.
        .executableTarget(
            name: "harbor",
            dependencies: [
                "HarborBootstrap", "HarborPorts", "HarborXPC", "HarborCapture",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // Harbor's main job, run by the README's first command.
        .executableTarget(
            name: "harbor-demo",
            dependencies: ["Harbor", "HarborBootstrap"],
            swiftSettings: strict
        ),
        // The seed articles' experiments, runnable one by one.
        .executableTarget(
            name: "harbor-seeds",
            dependencies: ["Harbor"],
            swiftSettings: strict
        ),
        // harbor-peer's command numbers, shared by harbor-peer, harbor-adversary
        // and the tests that drive it (constants only; no library product).
        .target(
            name: "HarborPeerCommands",
            swiftSettings: strict
        ),
        // The helper process cross-process tests spawn.
        .executableTarget(
            name: "harbor-peer",
            dependencies: ["HarborSystem", "Harbor", "HarborCoding", "HarborPeerCommands"],
            swiftSettings: strict
        ),
        // The hostile process the security tests spawn as another uid (P11,
        // P12): raw packets and system calls, no Harbor code on its side (only
        // harbor-peer's command numbers).
        .executableTarget(
            name: "harbor-adversary",
            dependencies: ["CHarborLinux", "HarborPeerCommands"],
            swiftSettings: strict
        ),
        // The child process the main-loop tests spawn: Dispatch's main queue,
        // @MainActor and signals need the main thread, which tests do not own.
        .executableTarget(
            name: "harbor-mainloop-probe",
            dependencies: ["HarborSystem", "HarborRunLoop", "HarborPorts"],
            swiftSettings: strict
        ),
        // The service and client the XPC tests run as other processes (and uids).
        .executableTarget(
            name: "harbor-xpc-probe",
            dependencies: ["HarborXPC", "HarborBootstrap", "HarborCoding", "HarborPorts", "HarborSystem"],
            swiftSettings: strict
        ),
        // The process the HarborDistributed tests serve an actor from, and kill.
        .executableTarget(
            name: "harbor-actor-probe",
            dependencies: ["HarborDistributed", "HarborDistributedProbe", "HarborBootstrap", "HarborSystem"],
            swiftSettings: strict
        ),
        // The child process the systemd tests supervise (sd_notify, activation).
        .executableTarget(
            name: "harbor-notify-probe",
            dependencies: ["HarborSystem", "HarborRunLoop", "HarborSystemd"],
            swiftSettings: strict
        ),
        // Benchmarks: Harbor beside the raw Linux floor and the peers, as ratios.
        // Kept out of every library product (Scripts/bench.sh runs it).
        // The timer benchmark's floor: a plain C 4-ary heap (harbor-bench only).
        .target(name: "CHarborTimerFloor"),
        .executableTarget(
            name: "harbor-bench",
            dependencies: ["HarborTransport", "HarborSystem", "Harbor", "HarborBootstrap", "HarborCoding", "HarborXPC", "HarborDistributed",
                           "CHarborLinux", "CSystemd", "CHarborTimerFloor"],
            // Not `strict`: the benchmarks mix Foundation and Glibc, and with
            // MemberImportVisibility a clean build attributes Glibc's C structs
            // (timespec) to CoreFoundation in files that import only Glibc.
            swiftSettings: []
        ),
        // The examples (Examples/README.md): the clock service and client as
        // an XPC session pair and as a distributed actor, built with the rest
        // and run by the tests (HarborXPCTests, HarborDistributedTests, the
        // real-systemd test). The interface both sides share:
        .target(
            name: "ClockInterface",
            dependencies: ["HarborDistributed"],
            path: "Examples/ClockInterface",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "clock-service",
            dependencies: ["ClockInterface", "HarborXPC", "HarborRunLoop", "HarborSystemd"],
            path: "Examples/ClockService",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "clock-client",
            dependencies: ["ClockInterface", "HarborXPC", "HarborRunLoop", "HarborSystem"],
            path: "Examples/ClockClient",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "clock-actor-service",
            dependencies: ["ClockInterface", "HarborDistributed"],
            path: "Examples/ClockActorService",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "clock-actor-client",
            dependencies: ["ClockInterface", "HarborDistributed"],
            path: "Examples/ClockActorClient",
            swiftSettings: strict
        ),
        .target(
            name: "HarborTestSupport",
            dependencies: ["HarborTransport", "HarborPorts", "HarborSystem", "CHarborLinux", "HarborPeerCommands"],
            path: "Tests/HarborTestSupport",
            swiftSettings: strict
        ),
        // The test support's own mechanisms: the watchdog that bounds a stuck
        // test, the process-tree listing it uses.
        .testTarget(
            name: "HarborTestSupportTests",
            dependencies: ["HarborTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborSystemTests",
            dependencies: ["HarborSystem", "HarborTestSupport", "CHarborLinux"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborPortsTests",
            dependencies: ["HarborTransport", "HarborSystem", "HarborPorts", "HarborCapture", "HarborTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborRunLoopTests",
            dependencies: ["HarborTransport", "HarborSystem", "Harbor", "HarborRunLoop", "HarborTestSupport", "harbor-mainloop-probe"],
            swiftSettings: strict
        ),
        // Docs/Porting.md's snippets, compiled and run, every other guide's Swift, compiled, and the seed experiments
        // (harbor-seeds) checked against what their articles say.
        .testTarget(
            name: "PortingGuideTests",
            dependencies: ["HarborTransport", "HarborSystem", "Harbor", "HarborCapture", "HarborFoundation", "HarborBootstrap", "HarborCoding", "HarborMach", "HarborPorts", "HarborSystemd", "HarborXPC", "HarborDistributed", "HarborTestSupport", "harbor-seeds"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborMachTests",
            dependencies: ["HarborTransport", "HarborSystem", "HarborMach", "HarborPorts", "HarborTestSupport", "harbor-peer", "HarborPeerCommands"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborCodingTests",
            dependencies: ["HarborCoding", "HarborPorts", "HarborTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborFoundationTests",
            dependencies: ["HarborTransport", "HarborSystem", "HarborFoundation", "HarborRunLoop", "HarborTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborSystemdTests",
            dependencies: ["HarborTransport", "HarborSystem", "Harbor", "HarborSystemd", "HarborTestSupport", "CSystemd", "CHarborLinux", "harbor-notify-probe"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborBootstrapTests",
            dependencies: ["HarborTransport", "HarborSystem", "HarborBootstrap", "Harbor", "HarborTestSupport", "CHarborLinux", "harbord", "harbor", "HarborPeerCommands"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborCrossProcessTests",
            dependencies: ["HarborTransport", "HarborSystem", "Harbor", "HarborCapture", "HarborCoding", "HarborTestSupport", "harbor-peer",
                           "HarborPeerCommands"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborXPCTests",
            dependencies: ["HarborXPC", "HarborBootstrap", "HarborCoding", "HarborPorts", "HarborRunLoop", "HarborSystem", "HarborTestSupport", "harbord",
                           "harbor-xpc-probe", "harbor", "ClockInterface", "clock-service", "clock-client"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborDistributedTests",
            dependencies: ["HarborDistributed", "HarborDistributedProbe", "HarborBootstrap", "HarborCoding", "HarborPorts",
                           "HarborSystem", "HarborTestSupport", "harbord", "harbor-actor-probe",
                           "ClockInterface", "clock-actor-service", "clock-actor-client"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborSecurityTests",
            dependencies: ["HarborTransport", "HarborSystem", "Harbor", "HarborBootstrap", "HarborTestSupport", "CHarborLinux",
                           "harbor-adversary", "harbor-peer", "harbord", "harbor", "HarborPeerCommands"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Fuzzing (Docs/Fuzzing.md): only when Scripts/fuzz.sh builds with
// HARBOR_FUZZ=1 and `-sanitize=fuzzer,address`, whose libFuzzer defines
// what the driver calls. An ordinary build never sees these targets.
if Context.environment["HARBOR_FUZZ"] == "1" {
    package.targets += [
        .target(name: "CHarborFuzz", path: "Fuzz/CHarborFuzz"),
        .executableTarget(
            name: "harbor-fuzz",
            dependencies: ["HarborTransport", "HarborSystem", "HarborBootstrap", "HarborPorts", "HarborRunLoop", "HarborCoding",
                           "HarborDistributed", "HarborXPC", "CHarborLinux", "CHarborFuzz"],
            path: "Fuzz/harbor-fuzz",
            swiftSettings: strict
        ),
    ]
    // fuzz.sh asks for edge counters without comparison tracing
    // (`-sanitize-coverage=`, which overrides `-sanitize=fuzzer`'s default
    // set); the modules that decode a peer's bytes trace their comparisons
    // again, so libFuzzer still learns the magic numbers, lengths and tags
    // they check. The rest (the ports, the run loop, the harness) run
    // without: there it cost a quarter of the admission target's time,
    // ASan's shadow checks traced as comparisons (Docs/Fuzzing.md).
    let decoders: Set<String> = ["HarborTransport", "HarborCoding", "HarborBootstrap", "HarborXPC", "HarborDistributed"]
    for target in package.targets where decoders.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Xllvm", "-sanitizer-coverage-trace-compares"])]
    }
}
