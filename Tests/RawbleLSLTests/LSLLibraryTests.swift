import Foundation
import RawbleLSL
import RawbleTestSupport
import Testing

/// liblsl loaded at run time: a file that is not there, a library that is not liblsl, and the
/// real one (pylsl's wheel carries it; `Scripts/bootstrap` installs pylsl in the project's venv).
@Suite struct LSLLibraryTests {
    @Test("a path that is not there: libraryNotFound naming it and the loader's reason")
    func missingFile() {
        #expect {
            _ = try LSLLibrary.load(path: "/nonexistent/liblsl.so.2")
        } throws: { error in
            guard case let .libraryNotFound(tried, reason) = error as? LSLError else { return false }
            return tried == ["/nonexistent/liblsl.so.2"] && reason.contains("/nonexistent/liblsl.so.2")
        }
    }

    @Test("a library that is not liblsl (the C library): missingFunction, the first function it lacks")
    func notLiblsl() {
        #expect {
            _ = try LSLLibrary.load(path: "libc.so.6")
        } throws: { error in
            error as? LSLError == .missingFunction("lsl_create_streaminfo", path: "libc.so.6")
        }
    }

    @Test("pylsl's liblsl: version 1.14 or later, a clock that advances, an outlet made and released",
          .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1 (the project's venv)"))
    func realLibrary() throws {
        let library = try LSLLibrary.load(path: try LSLInlet.venvLibrary())
        #expect(library.version >= 114)
        let before = library.localClock()
        let outlet = try library.makeOutlet(LSLStreamDescription(
            name: "rawble unit test", type: "RawbleUnitTest", nominalRate: LSLStreamDescription.irregularRate,
            sourceID: "rawble:unit-test:\(getpid())", channels: [LSLChannel(label: "A", unit: "ms", type: "A")]))
        #expect(outlet.channelCount == 1)
        // No inlet: a push returns at once (nothing waits for a consumer).
        outlet.push([1], timestamp: before)
        outlet.push(chunk: [2, 3], timestamps: [before, before + 0.01])
        #expect(library.localClock() >= before)
    }
}
