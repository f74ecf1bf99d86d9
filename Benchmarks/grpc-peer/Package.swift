// swift-tools-version: 6.1
// Harbor — the gRPC reference of harbor-bench's `interface-call` benchmark:
// a grpc-swift 2 unary echo over a Unix-domain socket, server and client.
// Its own package so that the main build does not pay for grpc-swift
// (Scripts/bench.sh builds it only when the gRPC variant is asked for).
import PackageDescription

let package = Package(
    name: "grpc-peer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
    ],
    targets: [
        .executableTarget(
            name: "grpc-peer",
            dependencies: [
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
