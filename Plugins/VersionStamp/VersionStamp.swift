import Foundation
import PackagePlugin

/// Stamps the `rawble` executable with its version and the git commit it is built from.
///
/// Before every build it runs `Scripts/version-stamp`, which writes `BuildStamp.swift` (the
/// version from the file `VERSION`, the commit, whether tracked files were modified) into this
/// plugin's work folder, where SwiftPM compiles it into the target. A prebuild command, not a
/// build command, because what it reads (git's idea of HEAD) is no input file SwiftPM could
/// watch; it is cheap (one `git rev-parse`, one `git status`), and it rewrites the file only when
/// the stamp changes, so an unchanged stamp recompiles nothing. `/bin/sh` runs it: SwiftPM allows
/// a prebuild command only a tool that exists before the build.
@main
struct VersionStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("stamp")
        return [
            .prebuildCommand(
                displayName: "Stamping \(target.name) with the version in VERSION and the git commit",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    package.appendingPathComponent("Scripts/version-stamp").path,
                    package.path,
                    output.path,
                ],
                outputFilesDirectory: output
            ),
        ]
    }
}
