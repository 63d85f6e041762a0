// swift-tools-version: 6.1
// Benchmarks live in their own package so `swift test` in the project never builds them.
//   cd Benchmarks && swift package benchmark
import PackageDescription

let package = Package(
    name: "rawble-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "WireBenchmarks",
            dependencies: [
                .product(name: "RawbleWire", package: "rawble"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/WireBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
