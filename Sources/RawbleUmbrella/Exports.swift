// The umbrella: `import Rawble` brings every module an embedder names, from the wire layer's
// types to the profiles, the session files and the analysis, and RawbleStack's one call that
// opens a transport string as a `Central`. It holds no code of its own: the composition root
// is RawbleStack, and each module below imports exactly what it uses, so the package's
// dependency graph reads the same in the manifest and in the sources (ModuleBoundaryTests
// checks both). Its folder is not Sources/Rawble, which would differ from the executable's
// Sources/rawble by case alone (one folder on a case-insensitive file system).
@_exported import RawbleAnalysis
@_exported import RawbleBearer
@_exported import RawbleGATT
@_exported import RawbleGATTCore
@_exported import RawbleHCITransport
@_exported import RawbleHeartRate
@_exported import RawbleHost
@_exported import RawbleHostCore
@_exported import RawbleKernel
@_exported import RawbleKernelHost
@_exported import RawbleLiveDisplay
@_exported import RawbleLSL
@_exported import RawbleManagementCore
@_exported import RawblePolar
@_exported import RawblePolarCore
@_exported import RawbleReport
@_exported import RawbleSMP
@_exported import RawbleStack
@_exported import RawbleTransport
@_exported import RawbleWire
