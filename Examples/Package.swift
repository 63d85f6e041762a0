// swift-tools-version: 6.1
// Three small programs built on rawble as a package dependency, as an embedder writes them: each
// opens the transport given on its command line with one library call and imports one module,
// the umbrella Rawble. `Scripts/examples` builds them (CI too), so they keep compiling
// against the library.
import PackageDescription

let package = Package(
    name: "rawble-examples",
    dependencies: [
        // The repository this folder is in; elsewhere: .package(url: <rawble's repository>, branch: "main").
        // Named, so the products below find it whatever the checkout's folder is called.
        .package(name: "rawble", path: ".."),
    ],
    targets: [
        /// Finds a heart-rate strap and prints each beat.
        .executableTarget(
            name: "heart-rate-logger",
            dependencies: [
                .product(name: "Rawble", package: "rawble"),
            ]
        ),
        /// Streams a Polar H10's raw ECG for a few seconds and prints each sample.
        .executableTarget(
            name: "ecg-logger",
            dependencies: [
                .product(name: "Rawble", package: "rawble"),
            ]
        ),
        /// Scans for a few seconds and prints the devices heard.
        .executableTarget(
            name: "scanner",
            dependencies: [
                .product(name: "Rawble", package: "rawble"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
