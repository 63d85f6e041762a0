// swift-tools-version: 6.1
// Benchmarks live in their own package so `swift test` in the project never builds them.
//   cd Benchmarks && swift package benchmark     (package-benchmark: percentiles, mallocs)
//   swift run -c release WireRates               (plain-clock rates, used by Scripts/benchmark)
import PackageDescription

let package = Package(
    name: "rawble-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "rawble", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The measured loops and input loading, shared by both executables.
        .target(
            name: "WireWorkloads",
            dependencies: [.product(name: "RawbleWire", package: "rawble")],
            path: "Sources/WireWorkloads"
        ),
        .executableTarget(
            name: "WireBenchmarks",
            dependencies: [
                "WireWorkloads",
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/WireBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "WireRates",
            dependencies: ["WireWorkloads"],
            path: "Sources/WireRates"
        ),
        // Clocks, memory and JSON-line output the timing executables share.
        .target(
            name: "TimingSupport",
            path: "Sources/TimingSupport"
        ),
        // Host timings against a Bumble peer over TCP (Scripts/benchmark-host, issue 3).
        .executableTarget(
            name: "HostTiming",
            dependencies: [
                "TimingSupport",
                .product(name: "RawbleHost", package: "rawble"),
                .product(name: "RawbleHostCore", package: "rawble"),
                .product(name: "RawbleTransport", package: "rawble"),
                .product(name: "RawbleWire", package: "rawble"),
            ],
            path: "Sources/HostTiming"
        ),
        // GATT client timings against the Bumble peer's rawble-lab (Scripts/benchmark-gatt, issue 4).
        .executableTarget(
            name: "GATTTiming",
            dependencies: [
                "TimingSupport",
                .product(name: "RawbleHost", package: "rawble"),
                .product(name: "RawbleTransport", package: "rawble"),
                .product(name: "RawbleGATT", package: "rawble"),
            ],
            path: "Sources/GATTTiming"
        ),
        // The live analysis' and the whole-file correction's CPU per measurement (Scripts/benchmark-report, issue 13).
        .executableTarget(
            name: "AnalysisRates",
            dependencies: [
                .product(name: "RawbleAnalysis", package: "rawble"),
                .product(name: "RawbleHeartRate", package: "rawble"),
                .product(name: "RawbleWire", package: "rawble"),
            ],
            path: "Sources/AnalysisRates"
        ),
        // An embedder consuming HeartRateMonitor.measurements() with no output (Scripts/benchmark-hr, issue 10).
        .executableTarget(
            name: "HREmbedder",
            dependencies: [
                "TimingSupport",
                .product(name: "RawbleHost", package: "rawble"),
                .product(name: "RawbleTransport", package: "rawble"),
                .product(name: "RawbleGATT", package: "rawble"),
                .product(name: "RawbleHeartRate", package: "rawble"),
            ],
            path: "Sources/HREmbedder"
        ),
        // Pairing (LE Secure Connections, Just Works) on a Bumble link, and the cryptography a
        // pairing is made of (Scripts/benchmark-pairing, issue 24).
        .executableTarget(
            name: "PairingTiming",
            dependencies: [
                "TimingSupport",
                .product(name: "RawbleHCITransport", package: "rawble"),
                .product(name: "RawbleHost", package: "rawble"),
                .product(name: "RawbleSMP", package: "rawble"),
                .product(name: "RawbleTransport", package: "rawble"),
                .product(name: "RawbleWire", package: "rawble"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Sources/PairingTiming"
        ),
        // Polar PMD frames decoded with their sample times (Scripts/benchmark-pmd, issue 26).
        .executableTarget(
            name: "PMDRates",
            dependencies: [
                .product(name: "RawblePolarCore", package: "rawble"),
                .product(name: "RawbleWire", package: "rawble"),
            ],
            path: "Sources/PMDRates"
        ),
        // SwiftNIO's read loop alone, next to a C blocking read (Scripts/benchmark-readloop, issue 10).
        .executableTarget(
            name: "ReadLoopFloor",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "RawbleTransport", package: "rawble"),
            ],
            path: "Sources/ReadLoopFloor"
        ),
    ],
    swiftLanguageModes: [.v6]
)
