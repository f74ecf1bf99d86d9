// swift-tools-version: 6.1
// Harbor: Mach-style message ports and CFRunLoop-style run loops for Linux.
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
        .executable(name: "harbor-demo", targets: ["harbor-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // Layer 0: the C shim. No logic, only what Glibc does not import.
        .target(
            name: "CHarborLinux",
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // Layer 1+2: typed system calls and the port/message kernel.
        .target(
            name: "HarborPorts",
            dependencies: [
                "CHarborLinux",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // The umbrella module users import.
        .target(
            name: "Harbor",
            dependencies: ["HarborPorts"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "harbor-demo",
            dependencies: ["Harbor"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "harbor-bench",
            dependencies: ["Harbor", "CHarborLinux"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HarborPortsTests",
            dependencies: ["HarborPorts", "HarborTestSupport"],
            swiftSettings: strict
        ),
        .target(
            name: "HarborTestSupport",
            dependencies: ["HarborPorts", "CHarborLinux"],
            path: "Tests/HarborTestSupport",
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
