#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// liblsl, the Lab Streaming Layer's C library, loaded at run time.
///
/// rawble does not link liblsl: a build and a run without it work, and only a run that asks for
/// LSL outlets needs it. ``load(path:)`` opens the library with `dlopen(3)` and looks up the
/// few functions of its C API (`lsl_c.h`) an outlet needs; nothing else of it is used.
///
/// The library stays loaded for the life of the process (it is never closed: its threads and
/// the outlets made from it may outlive any one owner).
///
/// ```swift
/// let lsl = try LSLLibrary.load()
/// let outlet = try lsl.makeOutlet(LSLStreamDescription(
///     name: "Polar H10 A1B2C3D4 HR", type: "HR", nominalRate: LSLStreamDescription.irregularRate,
///     sourceID: "rawble:C0:B1:E0:00:00:01:HR", channels: [LSLChannel(label: "HR", unit: "bpm", type: "HR")]))
/// outlet.push([72], timestamp: lsl.localClock())
/// ```
public final class LSLLibrary: @unchecked Sendable {
    // `@unchecked`: every stored property is a constant set once in `init`; liblsl's functions
    // are safe to call from any thread.

    /// The names `load(path:)` asks the dynamic loader for when no path is given, in order.
    public static let libraryNames = ["liblsl.so.2", "liblsl.so"]

    /// The file (or loader name) the library was loaded from.
    public let path: String

    typealias Handle = UnsafeMutableRawPointer
    typealias CreateStreamInfo = @convention(c) (
        UnsafePointer<CChar>, UnsafePointer<CChar>, Int32, Double, Int32, UnsafePointer<CChar>
    ) -> Handle?
    typealias GetDescription = @convention(c) (Handle) -> Handle?
    typealias AppendChild = @convention(c) (Handle, UnsafePointer<CChar>) -> Handle?
    typealias AppendChildValue = @convention(c) (Handle, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Handle?
    typealias CreateOutlet = @convention(c) (Handle, Int32, Int32) -> Handle?
    typealias Destroy = @convention(c) (Handle) -> Void
    typealias PushSample = @convention(c) (Handle, UnsafePointer<Float>, Double, Int32) -> Int32
    typealias PushChunk = @convention(c) (Handle, UnsafePointer<Float>, UInt, UnsafePointer<Double>, Int32) -> Int32
    typealias LocalClock = @convention(c) () -> Double
    typealias LibraryVersion = @convention(c) () -> Int32
    typealias LastError = @convention(c) () -> UnsafePointer<CChar>?

    let createStreamInfo: CreateStreamInfo
    let destroyStreamInfo: Destroy
    let getDescription: GetDescription
    let appendChild: AppendChild
    let appendChildValue: AppendChildValue
    let createOutlet: CreateOutlet
    let destroyOutlet: Destroy
    let pushSample: PushSample
    let pushChunk: PushChunk
    let localClockFunction: LocalClock
    let libraryVersion: LibraryVersion
    let lastError: LastError

    /// Opens liblsl: the file at `path` when one is given (only it is tried), else the first of
    /// ``libraryNames`` the dynamic loader finds (its search path, `LD_LIBRARY_PATH`, `ldconfig`'s cache).
    ///
    /// - Throws: ``LSLError/libraryNotFound(tried:reason:)`` when none opens,
    ///   ``LSLError/missingFunction(_:path:)`` when the file opens but is not a liblsl of 1.14 or
    ///   later (the C API this uses).
    public static func load(path: String? = nil) throws(LSLError) -> LSLLibrary {
        let candidates = path.map { [$0] } ?? libraryNames
        var reason = ""
        for candidate in candidates {
            if let handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL) {
                return try LSLLibrary(handle: handle, path: candidate)
            }
            reason = dlerror().map { String(cString: $0) } ?? "not found"
        }
        throw .libraryNotFound(tried: candidates, reason: reason)
    }

    private init(handle: UnsafeMutableRawPointer, path: String) throws(LSLError) {
        func symbol<Function>(_ name: String, as type: Function.Type) throws(LSLError) -> Function {
            guard let address = dlsym(handle, name) else { throw .missingFunction(name, path: path) }
            return unsafeBitCast(address, to: type)
        }
        self.path = path
        createStreamInfo = try symbol("lsl_create_streaminfo", as: CreateStreamInfo.self)
        destroyStreamInfo = try symbol("lsl_destroy_streaminfo", as: Destroy.self)
        getDescription = try symbol("lsl_get_desc", as: GetDescription.self)
        appendChild = try symbol("lsl_append_child", as: AppendChild.self)
        appendChildValue = try symbol("lsl_append_child_value", as: AppendChildValue.self)
        createOutlet = try symbol("lsl_create_outlet", as: CreateOutlet.self)
        destroyOutlet = try symbol("lsl_destroy_outlet", as: Destroy.self)
        pushSample = try symbol("lsl_push_sample_ftp", as: PushSample.self)
        pushChunk = try symbol("lsl_push_chunk_ftnp", as: PushChunk.self)
        localClockFunction = try symbol("lsl_local_clock", as: LocalClock.self)
        libraryVersion = try symbol("lsl_library_version", as: LibraryVersion.self)
        lastError = try symbol("lsl_last_error", as: LastError.self)
    }

    /// liblsl's version, major × 100 + minor (118 for 1.18).
    public var version: Int { Int(libraryVersion()) }

    /// Now on LSL's clock (`lsl_local_clock`), in seconds: the clock every sample's timestamp
    /// is on, which LabRecorder maps between machines.
    public func localClock() -> Double { localClockFunction() }

    /// A new outlet: the stream `description` describes, announced on the network until the
    /// outlet is released.
    ///
    /// - Parameters:
    ///   - description: the stream: name, type, rate, source ID, channels and metadata.
    ///   - chunkSize: samples per network chunk (0: as pushed).
    ///   - maxBuffered: how much an outlet keeps for a slow inlet before it drops the oldest:
    ///     seconds of a regular stream, hundreds of samples of an irregular one (liblsl's rule).
    /// - Throws: ``LSLError/outletFailed(_:)`` when liblsl refuses (the message is its own).
    public func makeOutlet(_ description: LSLStreamDescription, chunkSize: Int32 = 0, maxBuffered: Int32 = 360) throws(LSLError) -> LSLOutlet {
        guard let info = createStreamInfo(
            description.name, description.type, Int32(description.channels.count), description.nominalRate,
            LSLStreamDescription.float32Format, description.sourceID)
        else { throw .outletFailed(errorText("lsl_create_streaminfo failed")) }
        defer { destroyStreamInfo(info) }
        if let desc = getDescription(info) {
            if let channels = appendChild(desc, "channels") {
                for channel in description.channels {
                    guard let element = appendChild(channels, "channel") else { continue }
                    _ = appendChildValue(element, "label", channel.label)
                    _ = appendChildValue(element, "unit", channel.unit)
                    _ = appendChildValue(element, "type", channel.type)
                }
            }
            if !description.acquisition.isEmpty, let acquisition = appendChild(desc, "acquisition") {
                for field in description.acquisition { _ = appendChildValue(acquisition, field.name, field.value) }
            }
        }
        guard let outlet = createOutlet(info, chunkSize, maxBuffered) else {
            throw .outletFailed(errorText("lsl_create_outlet failed"))
        }
        return LSLOutlet(library: self, handle: outlet, channelCount: description.channels.count)
    }

    private func errorText(_ fallback: String) -> String {
        guard let text = lastError().map({ String(cString: $0) }), !text.isEmpty else { return fallback }
        return text
    }
}
