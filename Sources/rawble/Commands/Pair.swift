import ArgumentParser
import RawbleHost
import RawbleSMP
import RawbleStack
import RawbleWire

// `rawble pair`, `rawble bonds`: pairing on rawble's own host (issue 24) and the bonds it keeps.

struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Connect, pair with rawble's own Security Manager, keep the bond, disconnect.",
        discussion: """
            On rawble's own host (user:hciN, serial:, tcp:, unix:). On hciN the kernel
            pairs: use bluetoothctl there. Passkeys and comparisons are asked on the
            terminal; with no terminal they are declined unless --passkey gives the
            passkey to type or --confirm accepts the comparison (unseen: the key then
            counts as unauthenticated). A passkey rawble shows is new each time.

            Only LE Secure Connections with a 16-octet key is accepted; --legacy also
            accepts LE legacy pairing from a peer that cannot do better. A pairing that
            would replace a bond with a weaker one (unauthenticated, legacy, a shorter
            key) is refused and the bond kept: rawble bonds remove it first.

            A failure is one line naming the SMP reason and the side that gave it, with
            the status of its class: 80 wrong passkey, 81 confirm mismatch, 82 DHKey
            check failed, 83 the peer stopped pairing, 84 SMP timeout, 85 no method both
            sides can do, 79 any other.

            Examples:
              rawble pair C0:B1:E0:00:00:01 --transport tcp:127.0.0.1:9000
              rawble pair C0:B1:E0:00:00:01 --io keyboard --passkey 123456
              rawble pair C0:B1:E0:00:00:01 --io yesno --confirm
              rawble pair C0:B1:E0:00:00:01 --io keyboard-display --legacy --json
            """)

    @Argument(help: "The device address, AA:BB:CC:DD:EE:FF.", transform: BluetoothAddress.parse) var address: BluetoothAddress
    @Option(name: .customLong("address-type"), help: "public or random (default: as seen while scanning, else random).")
    var addressType: AddressTypeArgument?
    @OptionGroup var pairing: PairingOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let transport = try connection.resolvedTransport(environment: environment())
        if case .kernel = transport { throw PairingSettings.kernelRefusal(transport, what: "pairing") }
        let settings = pairing.settings
        let session = try await PeerSession.open(address, addressType: addressType, connection: connection, output: output,
                                                 pairing: settings)
        let json = output.json
        let bound = max(session.timeout, PeerSession.pairingBound)
        try await session.run { session in
            guard let link = session.connection as? Connection else {
                throw CLIError(.internalError, "pairing needs rawble's own host, and \(session.host.transport) is not it")
            }
            let outcome: PairingOutcome?
            do {
                outcome = try await link.pair(authenticated: false, timeout: bound)
            } catch {
                throw session.cliError(error)
            }
            guard let outcome else {
                throw CLIError(.internalError, "paired with \(link.peer), and the host kept no outcome")
            }
            if json {
                Output.json(Self.json(outcome, peer: link.peer))
            } else {
                Output.line(Self.line(outcome, peer: link.peer))
            }
        }
    }

    /// `paired with C0:… (random static): Just Works, LE Secure Connections, unauthenticated, bonded (16-octet key)`.
    static func line(_ outcome: PairingOutcome, peer: DeviceAddress) -> String {
        var parts = [methodName(outcome.method), outcome.secureConnections ? "LE Secure Connections" : "LE legacy pairing",
                     outcome.isAuthenticated ? "authenticated" : "unauthenticated",
                     outcome.bonded ? "bonded" : "not bonded"]
        parts[parts.count - 1] += " (\(outcome.keySize)-octet key)"
        var text = "paired with \(peer): " + parts.joined(separator: ", ")
        if let identity = outcome.peer.identity?.address, identity != peer { text += "; its identity is \(identity)" }
        return text
    }

    static func json(_ outcome: PairingOutcome, peer: DeviceAddress) -> JSON {
        var fields: [(String, JSON)] = [
            ("address", .string(peer.address.description)),
            ("addressType", .string(peer.kind.rawValue)),
            ("method", .string(methodName(outcome.method))),
            ("secureConnections", .bool(outcome.secureConnections)),
            ("authenticated", .bool(outcome.isAuthenticated)),
            ("bonded", .bool(outcome.bonded)),
            ("keySize", .int(Int(outcome.keySize))),
        ]
        if let identity = outcome.peer.identity?.address {
            fields.append(("identity", .string(identity.address.description)))
        }
        return .object(fields)
    }

    static func methodName(_ method: PairingMethod) -> String {
        switch method {
        case .justWorks: "Just Works"
        case .passkeyEntry: "Passkey Entry"
        case .numericComparison: "Numeric Comparison"
        }
    }
}

struct BondsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bonds",
        abstract: "List or remove the bonds rawble's own host keeps.",
        discussion: """
            Bonds belong to rawble's own host (user:hciN, serial:, tcp:, unix:); the
            kernel's (hciN) are bluetoothd's. Keys are never printed.

            Examples:
              rawble bonds
              rawble bonds --json
              rawble bonds remove C0:B1:E0:00:00:01
            """,
        subcommands: [List.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the bonds: peer, authenticated or not, LE Secure Connections or legacy, key size.",
            discussion: """
                Examples:
                  rawble bonds list
                  rawble bonds list --json
                """)

        @OptionGroup var output: OutputOptions

        func run() async throws {
            Logs.setUp(output)
            let bonds = try await BondsCommand.bonds(in: try BondsCommand.store()).sorted { $0.peer.address < $1.peer.address }
            for bond in bonds {
                if output.json {
                    Output.json(.object([
                        ("address", .string(bond.peer.address.description)),
                        ("addressType", .string(bond.peer.kind.rawValue)),
                        ("authenticated", .bool(bond.authenticated)),
                        ("secureConnections", .bool(bond.secureConnections)),
                        ("keySize", .int(Int(bond.keySize))),
                        ("resolvesPrivateAddresses", .bool(bond.peerIdentityResolvingKey != nil)),
                    ]))
                } else {
                    Output.line("\(bond.peer): \(bond.authenticated ? "authenticated" : "unauthenticated"), "
                                + "\(bond.secureConnections ? "LE Secure Connections" : "LE legacy pairing"), \(bond.keySize)-octet key"
                                + (bond.peerIdentityResolvingKey != nil ? ", resolves its private addresses" : ""))
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Forget the bond with a peer (it must pair again).",
            discussion: """
                Examples:
                  rawble bonds remove C0:B1:E0:00:00:01
                """)

        @Argument(help: "The peer's identity address, as rawble bonds lists it.", transform: BluetoothAddress.parse)
        var address: BluetoothAddress
        @OptionGroup var output: OutputOptions

        func run() async throws {
            Logs.setUp(output)
            let store = try BondsCommand.store()
            guard let store, let bond = try await BondsCommand.bonds(in: store).first(where: { $0.peer.address == address }) else {
                throw CLIError(.noBond, "no bond with \(address)", fix: "rawble bonds lists the bonds kept")
            }
            do {
                try await store.removeBond(with: bond.peer)
            } catch {
                throw CLIError(.cannotOpen, "\(error)")
            }
            if output.json {
                Output.json(.object([("removed", .string(address.description))]))
            } else {
                Output.line("removed the bond with \(bond.peer)")
            }
        }
    }

    /// The bonds of the user's identity; `nil` when it was never made (there are none).
    static func store() throws -> (any BondStore)? {
        let env = environment()
        guard let path = LocalIdentity.path(environment: env), let identity = try LocalIdentity.readFile(path) else { return nil }
        return try openBondStore(environment: env, identity: identity.deviceAddress)
    }

    /// Every bond in `store` (none without one); a store that cannot be read is one line.
    static func bonds(in store: (any BondStore)?) async throws -> [Bond] {
        guard let store else { return [] }
        do {
            return try await store.bonds()
        } catch {
            throw CLIError(.cannotOpen, "\(error)")
        }
    }
}
