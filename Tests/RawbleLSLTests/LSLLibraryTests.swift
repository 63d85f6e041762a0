import RawbleLSL
import RawbleTestPeers
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

    /// No outlet here: one made in this process would be announced with liblsl's default
    /// configuration (site-wide multicast). Outlets are tested through `rawble --lsl`, with
    /// discovery kept on the machine (LSLOutletTests).
    @Test("pylsl's liblsl: version 1.14 or later, every function found, a clock that advances",
          .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1 (the project's venv)"))
    func realLibrary() throws {
        let path = try LSLInlet.venvLibrary()
        let library = try LSLLibrary.load(path: path)
        #expect(library.path == path)
        #expect(library.version >= 114)
        let before = library.localClock()
        #expect(before > 0)
        #expect(library.localClock() >= before)
    }
}
