// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "rawble",
    products: [
        /// Pure wire layer: every PDU the stack speaks, decoded and encoded, no I/O.
        .library(name: "RawbleWire", targets: ["RawbleWire"]),
        /// The ATT bearer contract (`ATTBearer`, `BearerError`), free of any transport: what an
        /// embedder implements to run the GATT client on their own link.
        .library(name: "RawbleBearer", targets: ["RawbleBearer"]),
        /// The host's sans-I/O protocol engines (HCI command flow, ACL, L2CAP).
        .library(name: "RawbleHost", targets: ["RawbleHost"]),
        /// Byte-stream transports (H4 over TCP / unix sockets) the host sits on.
        .library(name: "RawbleTransport", targets: ["RawbleTransport"]),
        /// The ATT/GATT client, on any ATT bearer (the host's own L2CAP or the kernel's socket).
        .library(name: "RawbleGATT", targets: ["RawbleGATT"]),
        /// The Heart Rate profile on the GATT client: find the strap's characteristics, decode every beat.
        .library(name: "RawbleHeartRate", targets: ["RawbleHeartRate"]),
        /// Test support for users of the stack: a launcher for the Bumble virtual-controller peer.
        .library(name: "RawbleTestSupport", targets: ["RawbleTestSupport"]),
        /// The Linux kernel's Bluetooth sockets: adapters, the HCI raw and user channels as an
        /// `HCITransport`, the L2CAP ATT socket as an `ATTBearer`.
        .library(name: "RawbleKernel", targets: ["RawbleKernel"]),
        /// The kernel's central (`hciN`): scanning on the raw HCI channel, links through L2CAP sockets.
        .library(name: "RawbleKernelHost", targets: ["RawbleKernelHost"]),
        /// The stack composed: a transport string (`hci0`, `user:hci0`, `tcp:HOST:PORT`, `unix:PATH`,
        /// `serial:PATH[:BAUD]`) parsed and opened as a `Central` in one call.
        .library(name: "RawbleStack", targets: ["RawbleStack"]),
        /// Session files (`rawble hr --csv/--jsonl`) written and read line by line, and the session's SVG plots.
        .library(name: "RawbleReport", targets: ["RawbleReport"]),
        /// What a strap's numbers mean, sans I/O: RR artifact correction, time-domain HRV, heart-rate zones.
        .library(name: "RawbleAnalysis", targets: ["RawbleAnalysis"]),
        .executable(name: "rawble", targets: ["rawble"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // `swift package generate-documentation` (Scripts/docs); a command plugin only: nothing
        // it holds is linked into rawble or built by `swift build`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "RawbleWire",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleBearer",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleHost",
            dependencies: [
                "RawbleWire",
                "RawbleBearer",
                "RawbleTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleTransport",
            dependencies: [
                "RawbleWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        /// The kernel's Bluetooth ABI from libbluetooth-dev's headers, header-only: no pkgConfig,
        /// so nothing links the GPL libbluetooth.so.
        .systemLibrary(
            name: "CBluetooth",
            path: "Sources/CBluetooth",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        .target(
            name: "RawbleKernel",
            dependencies: [
                "CBluetooth",
                "RawbleWire",
                "RawbleBearer",
                "RawbleTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleKernelHost",
            dependencies: [
                "RawbleHost",
                "RawbleKernel",
                "RawbleBearer",
                "RawbleTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleStack",
            dependencies: [
                "RawbleHost",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleTransport",
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleGATT",
            dependencies: [
                "RawbleWire",
                "RawbleBearer",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleHeartRate",
            dependencies: [
                "RawbleGATT",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleReport",
            dependencies: ["RawbleWire"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleAnalysis",
            dependencies: ["RawbleWire"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleTestSupport",
            dependencies: ["RawbleBearer", "RawbleTransport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "rawble",
            dependencies: [
                "RawbleWire",
                "RawbleHost",
                "RawbleTransport",
                "RawbleGATT",
                "RawbleHeartRate",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleStack",
                "RawbleAnalysis",
                "RawbleReport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "RawbleWireTests",
            dependencies: [
                "RawbleWire",
                "RawbleTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "RawbleCLITests",
            dependencies: ["rawble", "RawbleWire", "RawbleTestSupport"],
            // Read from the source tree by path (HCINameTests), not bundled.
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "RawbleHostTests",
            dependencies: ["RawbleHost", "RawbleTransport", "RawbleTestSupport"]
        ),
        .testTarget(
            name: "RawbleGATTTests",
            dependencies: ["RawbleGATT", "RawbleHost", "RawbleTransport", "RawbleTestSupport"]
        ),
        .testTarget(
            name: "RawbleHeartRateTests",
            dependencies: ["RawbleHeartRate", "RawbleGATT", "RawbleHost", "RawbleTransport", "RawbleTestSupport"]
        ),
        .testTarget(
            name: "RawbleKernelTests",
            dependencies: [
                "RawbleKernel", "RawbleKernelHost", "RawbleHost", "RawbleWire", "CBluetooth", "RawbleTransport", "RawbleTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "RawbleStackTests",
            dependencies: ["RawbleStack", "RawbleHost", "RawbleKernel", "RawbleKernelHost", "RawbleTransport", "RawbleTestSupport"]
        ),
        .testTarget(
            name: "RawbleReportTests",
            dependencies: ["RawbleReport", "RawbleWire", "RawbleTestSupport"]
        ),
        .testTarget(
            name: "RawbleAnalysisTests",
            dependencies: ["RawbleAnalysis", "RawbleTestSupport"]
        ),
        .testTarget(
            name: "RawbleTransportTests",
            dependencies: ["RawbleTransport", "RawbleTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
