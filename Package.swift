// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "rawble",
    products: [
        /// The umbrella: `import Rawble` brings every module an embedder names (the layers, the
        /// profiles, the session files and the analysis, and RawbleStack's composition). No code of its own.
        .library(name: "Rawble", targets: ["Rawble"]),
        /// Pure wire layer: every PDU the stack speaks, decoded and encoded, no I/O.
        .library(name: "RawbleWire", targets: ["RawbleWire"]),
        /// The Linux kernel's management protocol (`HCI_CHANNEL_CONTROL`, BlueZ's mgmt-api), sans I/O:
        /// every command and event rawble sends or reads on it, typed, both ways. The kernel path's core.
        .library(name: "RawbleManagementCore", targets: ["RawbleManagementCore"]),
        /// The ATT bearer contract (`ATTBearer`, `BearerError`), free of any transport: what an
        /// embedder implements to run the GATT client on their own link.
        .library(name: "RawbleBearer", targets: ["RawbleBearer"]),
        /// The HCI transport contract (`HCITransport`, `TransportError`), free of any socket: what
        /// an embedder implements to run rawble's host on their own link to a controller.
        .library(name: "RawbleHCITransport", targets: ["RawbleHCITransport"]),
        /// The host's sans-I/O protocol engines: HCI command flow, ACL flow control and
        /// reassembly, the L2CAP responders, the scan aggregator. Bytes and events in and out.
        .library(name: "RawbleHostCore", targets: ["RawbleHostCore"]),
        /// rawble's own host, async, on any `HCITransport`: `Adapter`, connections, the `Central` API.
        .library(name: "RawbleHost", targets: ["RawbleHost"]),
        /// Byte-stream transports (H4 over TCP / unix sockets / serial lines) the host sits on.
        .library(name: "RawbleTransport", targets: ["RawbleTransport"]),
        /// The Security Manager, sans I/O: every SMP PDU typed, and the cryptographic toolbox pairing
        /// is built from (AES-CMAC, f4, f5, f6, g2, c1, s1, ah, P-256 keys) on swift-crypto.
        .library(name: "RawbleSMP", targets: ["RawbleSMP"]),
        /// The GATT procedures and the per-connection ATT server, sans I/O: PDUs in, PDUs out.
        .library(name: "RawbleGATTCore", targets: ["RawbleGATTCore"]),
        /// The ATT/GATT client, on any ATT bearer (the host's own L2CAP or the kernel's socket).
        .library(name: "RawbleGATT", targets: ["RawbleGATT"]),
        /// The Heart Rate profile on the GATT client: find the strap's characteristics, decode every beat.
        .library(name: "RawbleHeartRate", targets: ["RawbleHeartRate"]),
        /// Polar's Measurement Data (PMD) protocol, sans I/O: control-point requests and replies, data
        /// frames (ECG, acceleration, PPI; delta-compressed ones expanded) and their sample times.
        .library(name: "RawblePolarCore", targets: ["RawblePolarCore"]),
        /// Polar's PMD service on the GATT client (`PMDClient`): a Polar H10's raw ECG and acceleration.
        .library(name: "RawblePolar", targets: ["RawblePolar"]),
        /// Test support for users of the stack: a launcher for the Bumble virtual-controller peer.
        .library(name: "RawbleTestSupport", targets: ["RawbleTestSupport"]),
        .library(name: "RawbleTestPeers", targets: ["RawbleTestPeers"]),
        /// The Linux kernel's Bluetooth sockets: adapters, the HCI raw and user channels as an
        /// `HCITransport`, the L2CAP ATT socket as an `ATTBearer`.
        .library(name: "RawbleKernel", targets: ["RawbleKernel"]),
        /// The kernel's central (`hciN`): scanning on the raw HCI channel, links through L2CAP sockets.
        .library(name: "RawbleKernelHost", targets: ["RawbleKernelHost"]),
        /// The stack composed (the composition root): a transport string (`hci0`, `user:hci0`, `tcp:HOST:PORT`, `unix:PATH`,
        /// `serial:PATH[:BAUD]`) parsed and opened as a `Central` in one call; bonds kept in files (`FileBondStore`).
        .library(name: "RawbleStack", targets: ["RawbleStack"]),
        /// Session files (`rawble hr --csv/--jsonl`) written and read line by line, and the session's SVG plots.
        .library(name: "RawbleReport", targets: ["RawbleReport"]),
        /// What a strap's numbers mean, sans I/O: RR artifact correction, time-domain HRV, heart-rate zones.
        .library(name: "RawbleAnalysis", targets: ["RawbleAnalysis"]),
        /// The live display (`rawble hr --serve`): a page of a tile per strap, updated by Server-Sent
        /// Events, served over HTTP on swift-nio; it knows a strap only as a small update value.
        .library(name: "RawbleLiveDisplay", targets: ["RawbleLiveDisplay"]),
        /// Lab Streaming Layer outlets on liblsl, loaded at run time (`dlopen`): nothing needs
        /// liblsl to build or to run without outlets.
        .library(name: "RawbleLSL", targets: ["RawbleLSL"]),
        .executable(name: "rawble", targets: ["rawble"]),
    ],
    // Exact versions, the ones rawble is built and tested with: Package.resolved is not
    // committed (docs/architecture.md, "Dependencies"), so these lines are what a fresh clone
    // resolves. Raise one on purpose, with the tests run on it.
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-system", exact: "1.8.1"),
        // P-256 key agreement, AES-128 and AES-CMAC for the Security Manager (RawbleSMP).
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        // `swift package generate-documentation` (docs/api.md); a command plugin only: nothing
        // it holds is linked into rawble or built by `swift build`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", exact: "1.5.0"),
    ],
    targets: [
        // The umbrella's folder is not Sources/Rawble: that would differ from the executable's
        // Sources/rawble by case alone, one folder on a case-insensitive file system.
        .target(
            name: "Rawble",
            dependencies: [
                "RawbleAnalysis",
                "RawbleBearer",
                "RawbleGATT",
                "RawbleGATTCore",
                "RawbleHCITransport",
                "RawbleHeartRate",
                "RawbleHost",
                "RawbleHostCore",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleLiveDisplay",
                "RawbleLSL",
                "RawbleManagementCore",
                "RawblePolar",
                "RawblePolarCore",
                "RawbleReport",
                "RawbleSMP",
                "RawbleStack",
                "RawbleTransport",
                "RawbleWire",
            ],
            path: "Sources/RawbleUmbrella",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleWire",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleManagementCore",
            dependencies: ["RawbleWire"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleBearer",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleHCITransport",
            dependencies: [
                "RawbleWire",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleHostCore",
            dependencies: ["RawbleWire"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleHost",
            dependencies: [
                "RawbleWire",
                "RawbleBearer",
                "RawbleHCITransport",
                "RawbleHostCore",
                "RawbleSMP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleTransport",
            dependencies: [
                "RawbleWire",
                "RawbleHCITransport",
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
                "RawbleManagementCore",
                "RawbleWire",
                "RawbleBearer",
                "RawbleHCITransport",
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
                "RawbleManagementCore",
                "RawbleWire",
                "RawbleHCITransport",
                "RawbleHostCore",
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
                "RawbleWire",
                "RawbleBearer",
                "RawbleHCITransport",
                "RawbleHostCore",
                "RawbleHost",
                "RawbleTransport",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleManagementCore",
                "RawbleGATTCore",
                "RawbleGATT",
                "RawbleHeartRate",
                "RawblePolar",
                "RawblePolarCore",
                "RawbleSMP",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleSMP",
            dependencies: [
                "RawbleWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleGATTCore",
            dependencies: ["RawbleWire", "RawbleBearer"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleGATT",
            dependencies: [
                "RawbleWire",
                "RawbleBearer",
                "RawbleGATTCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleHeartRate",
            dependencies: [
                "RawbleWire",
                "RawbleGATTCore",
                "RawbleGATT",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawblePolarCore",
            dependencies: ["RawbleWire"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawblePolar",
            dependencies: [
                "RawbleWire",
                "RawblePolarCore",
                "RawbleGATTCore",
                "RawbleGATT",
                "RawbleHeartRate",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleReport",
            dependencies: ["RawbleWire", "RawblePolarCore"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleAnalysis",
            dependencies: ["RawbleWire"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleLiveDisplay",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleLSL",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleTestSupport",
            dependencies: [
                "RawbleWire",
                "RawbleBearer",
                "RawbleHCITransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "RawbleTestPeers",
            dependencies: ["RawbleWire", "RawbleTestSupport"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "rawble",
            dependencies: [
                "RawbleWire",
                "RawbleBearer",
                "RawbleHCITransport",
                "RawbleHostCore",
                "RawbleHost",
                "RawbleTransport",
                "RawbleGATTCore",
                "RawbleGATT",
                "RawbleHeartRate",
                "RawblePolar",
                "RawblePolarCore",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleStack",
                "RawbleAnalysis",
                "RawbleReport",
                "RawbleLiveDisplay",
                "RawbleSMP",
                "RawbleLSL",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            // `rawble --version`: the version in VERSION and the git commit, stamped before every build.
            plugins: ["VersionStamp"]
        ),
        /// Writes BuildStamp.swift into the `rawble` target before every build (Scripts/version-stamp).
        .plugin(name: "VersionStamp", capability: .buildTool()),
        .testTarget(
            name: "RawbleWireTests",
            dependencies: [
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleWire",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "RawbleManagementCoreTests",
            dependencies: [
                "RawbleManagementCore",
                "RawbleTestSupport",
                "RawbleWire",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "RawbleHostCoreTests",
            dependencies: [
                "RawbleHostCore",
                "RawbleTestSupport",
                "RawbleWire",
            ]
        ),
        .testTarget(
            name: "RawbleHostTests",
            dependencies: [
                "RawbleBearer",
                "RawbleGATT",
                "RawbleHCITransport",
                "RawbleHeartRate",
                "RawbleHost",
                "RawbleHostCore",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleTransport",
                "RawbleWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "RawbleTransportTests",
            dependencies: [
                "RawbleHCITransport",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleTransport",
                "RawbleWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "RawbleSMPTests",
            dependencies: [
                "RawbleSMP",
                "RawbleWire",
                "RawbleTestSupport",
            ]
        ),
        .testTarget(
            name: "RawbleGATTCoreTests",
            dependencies: [
                "RawbleGATTCore",
                "RawbleTestSupport",
                "RawbleWire",
            ]
        ),
        .testTarget(
            name: "RawbleGATTTests",
            dependencies: [
                "RawbleBearer",
                "RawbleGATT",
                "RawbleGATTCore",
                "RawbleHCITransport",
                "RawbleHost",
                "RawbleHostCore",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleTransport",
                "RawbleWire",
            ]
        ),
        .testTarget(
            name: "RawbleLiveDisplayTests",
            dependencies: [
                "RawbleLiveDisplay",
                "RawbleTestSupport",
                "RawbleTestPeers",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "RawbleHeartRateTests",
            dependencies: [
                "RawbleBearer",
                "RawbleGATT",
                "RawbleGATTCore",
                "RawbleHeartRate",
                "RawbleTestSupport",
                "RawbleWire",
            ]
        ),
        .testTarget(
            name: "RawblePolarTests",
            dependencies: [
                "RawbleBearer",
                "RawbleGATT",
                "RawbleGATTCore",
                "RawblePolar",
                "RawblePolarCore",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleWire",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "RawbleKernelTests",
            dependencies: [
                "CBluetooth",
                "RawbleBearer",
                "RawbleHost",
                "RawbleHostCore",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleManagementCore",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleTransport",
                "RawbleWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "RawbleKernelHostTests",
            dependencies: [
                "RawbleBearer",
                "RawbleHost",
                "RawbleHostCore",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleTestSupport",
                "RawbleWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "RawbleStackTests",
            dependencies: [
                "RawbleHost",
                "RawbleHostCore",
                "RawbleKernel",
                "RawbleKernelHost",
                "RawbleSMP",
                "RawbleStack",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleTransport",
                "RawbleWire",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "RawbleReportTests",
            dependencies: [
                "RawblePolarCore",
                "RawbleReport",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleWire",
            ]
        ),
        .testTarget(
            name: "RawbleAnalysisTests",
            dependencies: [
                "RawbleAnalysis",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleWire",
            ]
        ),
        .testTarget(
            name: "RawbleLSLTests",
            dependencies: ["RawbleLSL", "RawbleTestPeers"]
        ),
        .testTarget(
            name: "RawbleCLITests",
            dependencies: [
                "rawble",
                "RawbleAnalysis",
                "RawbleLiveDisplay",
                "RawbleGATT",
                "RawbleGATTCore",
                "RawbleHeartRate",
                "RawbleHost",
                "RawbleHostCore",
                "RawbleKernel",
                "RawblePolar",
                "RawblePolarCore",
                "RawbleReport",
                "RawbleSMP",
                "RawbleStack",
                "RawbleTestSupport",
                "RawbleTestPeers",
                "RawbleTransport",
                "RawbleWire",
            ],
            // Read from the source tree by path (HCINameTests), not bundled.
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
