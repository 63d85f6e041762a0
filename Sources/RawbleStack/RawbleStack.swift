// RawbleStack is the composition root: the one call that opens a transport string as a
// `Central` (`TransportAddress.openCentral`), and the bonds kept in files (`FileBondStore`). It
// was the umbrella before `Rawble` and still re-exports the layers it composes, from the wire
// types to the GATT client and the Heart Rate profile (with Polar's PMD client), so `import RawbleStack` keeps
// working; `import Rawble` is the umbrella now. Only these two re-export; every other module
// imports exactly what it uses, so the package's dependency graph reads the same in the
// manifest and in the sources (ModuleBoundaryTests checks both).
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
@_exported import RawblePolar
@_exported import RawblePolarCore
@_exported import RawbleSMP
@_exported import RawbleTransport
@_exported import RawbleWire
