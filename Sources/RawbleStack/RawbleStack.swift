// RawbleStack is the umbrella: `import RawbleStack` brings every layer an embedder names, from
// the wire types to the GATT client and the Heart Rate profile, and the one call that opens a
// transport string as a `Central` (`TransportAddress.openCentral`), and the bonds kept in files
// (`FileBondStore`). It is the only module that re-exports others; each of those imports exactly
// what it uses, so the package's dependency graph reads the same in the manifest and in the
// sources (ModuleBoundaryTests checks both).
@_exported import RawbleBearer
@_exported import RawbleGATT
@_exported import RawbleGATTCore
@_exported import RawbleHCITransport
@_exported import RawbleHeartRate
@_exported import RawbleHost
@_exported import RawbleHostCore
@_exported import RawbleKernel
@_exported import RawbleKernelHost
@_exported import RawbleManagementCore
@_exported import RawbleSMP
@_exported import RawbleTransport
@_exported import RawbleWire
