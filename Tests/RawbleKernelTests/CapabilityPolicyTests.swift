@testable import RawbleKernel
import Testing

/// What each kind of run keeps, step by step (the kernel's checks behind it are in
/// docs/capabilities.md).
@Suite struct CapabilityPolicyTests {
    typealias Policy = CapabilityPolicy

    @Test("a run that opens no kernel socket keeps nothing, from the start")
    func noKernelSocketKeepsNothing() {
        for channel in Policy.Channel.allCases {
            for step in Policy.Step.allCases {
                #expect(Policy(use: .offline, channel: channel).kept(after: step) == [], "\(channel) \(step)")
            }
        }
        for use in Policy.Use.allCases {
            for step in Policy.Step.allCases {
                #expect(Policy(use: use, channel: .h4).kept(after: step) == [], "\(use) \(step)")
            }
        }
    }

    @Test("user:hciN: CAP_NET_ADMIN for the bind only, nothing once the channel is open")
    func userChannelKeepsNothingOnceOpen() {
        for use in [Policy.Use.scan, .connect, .serve] {
            let policy = Policy(use: use, channel: .user)
            #expect(policy.kept(after: .start) == .netAdmin)
            #expect(policy.kept(after: .opened) == [])
            #expect(policy.kept(after: .scanStarted) == [])
        }
    }

    @Test("hciN scan: both to open, CAP_NET_RAW alone once the kernel's discovery is asked for")
    func kernelScanDropsNetAdminOnceScanning() {
        for channel in [Policy.Channel.raw, .rawWithMonitor] {
            let policy = Policy(use: .scan, channel: channel)
            #expect(policy.kept(after: .start) == [.netRaw, .netAdmin])
            #expect(policy.kept(after: .opened) == [.netRaw, .netAdmin])
            #expect(policy.kept(after: .scanStarted) == .netRaw)
        }
    }

    @Test("hciN connect and serve: both while the kernel may ask a pairing question")
    func kernelLinksKeepBoth() {
        for use in [Policy.Use.connect, .serve] {
            for step in Policy.Step.allCases {
                #expect(Policy(use: use, channel: .raw).kept(after: step) == .bluetooth, "\(use) \(step)")
            }
        }
    }

    @Test("every step keeps at most what the one before it kept, and only the two Bluetooth capabilities")
    func stepsOnlyShrink() {
        for use in Policy.Use.allCases {
            for channel in Policy.Channel.allCases {
                let policy = Policy(use: use, channel: channel)
                let kept = Policy.Step.allCases.map(policy.kept(after:))
                for (earlier, later) in zip(kept, kept.dropFirst()) {
                    #expect(earlier.isSuperset(of: later), "\(use) \(channel): \(earlier) then \(later)")
                }
                #expect(Capabilities.bluetooth.isSuperset(of: kept[0]))
            }
        }
    }

    @Test func capabilitiesReadAsTheirNames() {
        #expect(Capabilities.bluetooth.description == "CAP_NET_RAW, CAP_NET_ADMIN")
        #expect(Capabilities.netAdmin.rawValue == 0x1000 && Capabilities.netRaw.rawValue == 0x2000)
        #expect(Capabilities([]).description == "none")
        #expect(Capabilities(rawValue: 1 << 21).description == "capability 21")
    }

    /// The keeper thread on its own (its sets are its own: this test process's threads keep
    /// theirs): calls run there, one at a time, each with what it asked for raised only while
    /// it runs; what is dropped is gone for good. Many calls from several threads at once, each
    /// handing over a closure that is not escaping (the keeper lets go of it before the caller
    /// resumes, or the runtime would stop the process).
    @Test func theKeeperRaisesOnlyAroundEachCall() async throws {
        let here = try #require(ThreadCapabilities.current)
        let kept = here.permitted.intersection(.netRaw)
        let keeper = try CapabilityKeeper.start(keeping: kept)
        let callers = pthread_self()
        let ranElsewhere = keeper.perform([]) { pthread_equal(pthread_self(), callers) == 0 }
        #expect(ranElsewhere)
        let during = try #require(keeper.perform(.netRaw) { ThreadCapabilities.current })
        #expect(during.effective == kept && during.permitted == kept && during.inheritable == [])
        let between = try #require(keeper.perform([]) { ThreadCapabilities.current })
        #expect(between.effective == [] && between.permitted == kept)
        #expect(ThreadCapabilities.current == here, "the caller's own sets are untouched")

        let total = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var sum = 0
                    for index in 0..<250 {
                        var local = index
                        let doubled: Int = keeper.perform(.netRaw) {
                            local *= 2
                            return local
                        }
                        sum += doubled - index
                    }
                    return sum
                }
            }
            return await group.reduce(0, +)
        }
        #expect(total == 4 * (0..<250).reduce(0, +))

        keeper.keepOnly([])
        let after = try #require(keeper.perform(.netRaw) { ThreadCapabilities.current })
        #expect(after.effective == [] && after.permitted == [], "dropped for good")
        if kept.isEmpty { print("CapabilityPolicyTests: this process holds no CAP_NET_RAW: the keeper was checked holding nothing") }
    }

    /// Without `Privileges.start` (a library user, this test process), a privileged call runs on
    /// the calling thread as it is, and what is available is that thread's effective set.
    @Test func withoutAStartCallsRunHere() throws {
        let here = try #require(ThreadCapabilities.current)
        #expect(Privileges.available == here.effective)
        let thread = Privileges.perform(.netRaw) { pthread_self() }
        #expect(pthread_equal(thread, pthread_self()) != 0)
    }
}

#if canImport(Glibc)
import Glibc
#endif
