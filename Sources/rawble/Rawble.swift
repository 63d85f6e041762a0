import ArgumentParser
import RawbleKernel
#if canImport(Glibc)
import Glibc
#endif

/// `rawble`: a Bluetooth Low Energy tool that speaks HCI itself, without bluetoothd.
struct Rawble: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rawble",
        abstract: "Bluetooth Low Energy from the terminal, without BlueZ's daemon.",
        discussion: """
            Options every command takes, before or after it:
              --transport T      hciN (kernel; default: the first adapter up), user:hciN
                                 (HCI user channel), tcp:HOST:PORT, unix:PATH,
                                 serial:PATH[:BAUD]
              --btsnoop FILE     every HCI packet of the session into a btsnoop file
                                 (mode 0600)
              --trace            every HCI packet and ATT PDU decoded, one line each
                                 on stderr as it passes: seconds since the start,
                                 > sent or < received, then what decode btsnoop shows
              --include-keys     keep the keys in --btsnoop and --trace (zeroed
                                 otherwise): such a capture decrypts your links
              --timeout SECONDS  bound on connecting and on each ATT transaction (30)
              --json             one JSON object per line on stdout
              -v, -vv, -vvv      the stack's log records on stderr as they happen
              --quiet            no status line or spinner

            Environment:
              RAWBLE_TRANSPORT   the transport when --transport is not given
              RAWBLE_LOG=LEVEL   as -v: trace, debug, info, notice, warning, error

            Privileges: on hciN rawble needs CAP_NET_RAW and CAP_NET_ADMIN. Installed, the
            binary has them for root and the members of the group rawble only
            (root:rawble, mode 0754); an administrator adds a user with adduser USER
            rawble. Membership allows recording every Bluetooth packet on the machine,
            keys and keystrokes included. rawble keeps a capability only while it needs
            one, and none for decode, report or the tcp:, unix: and serial: transports.

            No strap at hand: rawble peripheral hr is one, on a second adapter (another
            machine's, or a second controller here: --transport on each), for rawble hr.

            Shell completion: rawble --generate-completion-script bash (or zsh, fish).

            Exit statuses: 0 success, 64 usage, 65 malformed input, 66 cannot open file, \
            67 no such bond, 69 unavailable (no adapter / not in this build), 70 internal error, \
            71 system (no /proc), 74 transport, 75 timeout, 76 peer error, 77 permission, 78 interrupted, \
            79 pairing failed (other), 80 wrong passkey, 81 confirm mismatch, \
            82 DHKey check failed, 83 the peer stopped pairing, 84 SMP timeout, \
            85 no method both sides can do, 86 nothing to export (report --export).
            """,
        version: BuildStamp.versionText,
        subcommands: [Adapters.self, Decode.self, Scan.self, GATT.self, Read.self, Write.self, Notify.self, Shell.self, HeartRate.self, ECG.self, Report.self, PeripheralCommand.self, Pair.self, BondsCommand.self]
    )
}

@main
enum Main {
    static func main() async {
        // A file capability raises the effective set at exec: lowered before anything else
        // runs, and the run's policy decides below what is kept at all (docs/capabilities.md).
        Privileges.lower()
        // Without /proc (a chroot or a container that mounts none) Swift's runtime finds no
        // argument (it reads /proc/self/cmdline), so every command ran as a bare `rawble`, and
        // libdispatch's thread pool traps when it reads /proc/TID/stat: no command can be run.
        guard access("/proc/self/stat", R_OK) == 0 else {
            Output.error("rawble: /proc is not mounted, and Swift's runtime reads rawble's command line and threads there: "
                + "mount it (mount -t proc proc /proc; in a chroot, the host's: mount --bind /proc ROOT/proc)")
            exit(ExitStatus.system.rawValue)
        }
        let arguments = Write.negativeValueLast(reorderGlobalOptions(Array(CommandLine.arguments.dropFirst())))
        do {
            try Logs.bootstrap(environment: environment())
            try checkCommand(arguments)
            try Decode.checkKind(arguments)
            var command = try Rawble.parseAsRoot(arguments)
            try Privileges.start(for: command, environment: environment())
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            Privileges.finish()
            Logs.finish(failed: false)
        } catch let error as CLIError {
            Privileges.finish()
            Logs.finish(failed: true)
            Output.error("rawble: \(error)")
            exit(error.status.rawValue)
        } catch {
            Privileges.finish()
            let code = Rawble.exitCode(for: error)
            Logs.finish(failed: code != .success)
            guard code != .success else { Rawble.exit(withError: error) }  // --help, --version
            // One line for a person: the cause, and where to look for the fix.
            let message = UsageWording.reworded(Rawble.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)")
            let command = arguments.first { !$0.hasPrefix("-") } ?? ""
            let help = Rawble.configuration.subcommands.contains { $0._commandName == command }
                ? "rawble \(command) --help" : "rawble --help"
            Output.error("rawble: \(message) (see `\(help)`)")
            exit(code.rawValue == 0 ? ExitStatus.usage.rawValue : code.rawValue)
        }
    }

    /// A first argument that names no command: one line, with the command meant when it is a
    /// typo (`sacn`), else the list (argument-parser says only "Unexpected argument").
    static func checkCommand(_ arguments: [String]) throws {
        guard let first = arguments.first, !first.hasPrefix("-") else { return }
        let names = Rawble.configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(first) else { return }
        if let meant = Suggestion.closest(to: first, among: names) {
            throw CLIError(.usage, "no command '\(first)'", fix: "did you mean '\(meant)'? (rawble --help lists them)")
        }
        throw CLIError(.usage, "no command '\(first)'", fix: "name one of \(names.dropLast().joined(separator: ", ")) (rawble --help)")
    }

    /// Options shared by every command may come before the subcommand (`rawble --json scan`);
    /// argument-parser only accepts them after it, so move them to the end.
    static func reorderGlobalOptions(_ arguments: [String]) -> [String] {
        // The common case, a subcommand first, has nothing to move (and needs no command names,
        // whose look-up by reflection was a percent of `hr`'s whole CPU).
        guard let first = arguments.first, first.hasPrefix("-") else { return arguments }
        let withValue: Set<String> = ["--transport", "--btsnoop", "--timeout"]
        let flags: Set<String> = ["--json", "--trace", "--include-keys", "--quiet", "--verbose", "-v", "-vv", "-vvv"]
        let subcommands = Set(Rawble.configuration.subcommands.map { $0._commandName })
        var moved: [String] = []
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if subcommands.contains(argument) || argument == "--" {
                rest.append(contentsOf: arguments[index...])
                break
            }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if withValue.contains(name) {
                moved.append(argument)
                if !argument.contains("="), index + 1 < arguments.count {
                    moved.append(arguments[index + 1])
                    index += 1
                }
            } else if flags.contains(argument) {
                moved.append(argument)
            } else {
                rest.append(argument)
            }
            index += 1
        }
        if let terminator = rest.firstIndex(of: "--") {
            rest.insert(contentsOf: moved, at: terminator)
        } else {
            rest.append(contentsOf: moved)
        }
        return rest
    }
}

