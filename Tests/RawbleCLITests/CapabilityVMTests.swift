import Foundation
import RawbleKernel
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The capability sets of a capable `rawble` while each kind of command runs, in a real kernel:
/// the binary has `cap_net_raw,cap_net_admin=ep` (as the package gives it) and runs as nobody;
/// every thread's sets come from `/proc/PID/task/*/status` at a point where the command is
/// doing its work. What the policy says for each is in docs/capabilities.md.
@Suite("Capabilities of a running rawble in a real Linux kernel (Scripts/vm-test)", .serialized,
       .tags(.vm, .bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: ProcessInfo.processInfo.environment["RAWBLE_TESTS_WITHOUT_VM"] != "1",
                "RAWBLE_TESTS_WITHOUT_VM=1: Scripts/vm-test cannot run here"))
struct CapabilityVMTests {
    /// One thread's sets, from a `sets` line: `TID COMM CapInh=… CapPrm=… CapEff=… CapAmb=…`.
    struct ThreadSets {
        var tid: String
        var name: String
        var masks: [String: UInt64]

        init?(_ line: String) {
            let words = line.split(separator: " ").map(String.init)
            guard words.count == 6 else { return nil }
            tid = words[0]
            name = words[1]
            masks = [:]
            for word in words.dropFirst(2) {
                let pair = word.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, let mask = UInt64(pair[1], radix: 16) else { return nil }
                masks[pair[0]] = mask
            }
            guard masks.count == 4 else { return nil }
        }

        subscript(field: String) -> UInt64 { masks[field] ?? .max }
    }

    static func sets(_ step: KernelPathVMTests.Step?) -> [ThreadSets] {
        let threads = (step?.stdout ?? []).compactMap(ThreadSets.init)
        if threads.isEmpty { Issue.record("no thread's sets in \(step.map { "\($0.status) \($0.stdout) \($0.stderr)" } ?? "a step that did not run")") }
        return threads
    }

    /// No thread has any capability in any set.
    static func expectNone(_ threads: [ThreadSets], _ what: String) {
        #expect(!threads.isEmpty, "\(what): no thread read")
        for thread in threads {
            for field in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
                #expect(thread[field] == 0, "\(what): thread \(thread.tid) (\(thread.name)) \(field) \(String(thread[field], radix: 16))")
            }
        }
    }

    /// Only the keeper thread holds `permitted`, none raised; every other thread holds nothing.
    static func expectKept(_ permitted: Capabilities, _ threads: [ThreadSets], _ what: String) {
        #expect(threads.count > 1, "\(what): \(threads.map(\.name))")
        let keepers = threads.filter { $0.name == "rawble-caps" }
        #expect(keepers.count == 1, "\(what): \(threads.map(\.name))")
        for thread in threads {
            let kept: UInt64 = thread.name == "rawble-caps" ? permitted.rawValue : 0
            #expect(thread["CapPrm"] == kept, "\(what): thread \(thread.tid) (\(thread.name)) CapPrm \(String(thread["CapPrm"], radix: 16))")
            for field in ["CapInh", "CapEff", "CapAmb"] {
                #expect(thread[field] == 0, "\(what): thread \(thread.tid) (\(thread.name)) \(field) \(String(thread[field], radix: 16))")
            }
        }
    }

    @Test("as nobody with cap_net_raw,cap_net_admin=ep: scan on user:hci0 holds nothing once open; decode nothing from the start; scan on hci0 only CAP_NET_RAW, on one thread, once scanning; hr on hci0 both, on that thread only, never effective")
    func setsWhileRunning() async throws {
        let (steps, result) = try await KernelPathVMTests.boot(#"""
            c=/tmp/rawble
            cp "$r" $c && chmod 0755 $c && setcap cap_net_raw,cap_net_admin=ep $c
            nobody="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"
            export XDG_STATE_HOME=/tmp/state; mkdir -m 1777 -p $XDG_STATE_HOME
            # Every thread of process $1: TID COMM and its four sets (a script: a step runs a command).
            cat >/tmp/sets <<'EOF'
            for t in /proc/$1/task/*; do
              printf '%s %s' "${t##*/}" "$(cat $t/comm)"
              for f in CapInh CapPrm CapEff CapAmb; do printf ' %s=%s' $f "$(awk -v f=$f: '$1 == f { print $2 }' $t/status)"; done
              echo
            done
            EOF
            # Until file $1 holds $2, at most 20 s.
            seen() { i=0; while [ $i -lt 200 ] && ! grep -q "$2" "$1" 2>/dev/null; do sleep 0.1; i=$((i+1)); done; grep -q "$2" "$1"; }
            # hci0 powers itself off ~2 s after it appears when nobody raises it: the user channel needs it down.
            i=0; while [ $i -lt 50 ] && "$r" adapters --json | grep -q '"up":true'; do sleep 0.2; i=$((i+1)); done
            $nobody -- $c scan --transport user:hci0 --json >/tmp/user.out 2>/tmp/user.err & pid=$!
            seen /tmp/user.out C0:B1:E0:00:00:01
            step user sh /tmp/sets $pid
            kill -INT $pid; wait $pid; s=$?
            step userend sh -c "cat /tmp/user.err >&2; exit $s"
            # decode of a capture (20 000 Command Complete events): once its first line is read,
            # it is decoding, and blocks writing the rest (far more than a pipe holds) until
            # this shell closes its end.
            python3 -c 'import struct, sys
            record = struct.pack(">IIIIq", 7, 7, 3, 0, 0x00E03AB44A676000) + bytes.fromhex("040e0401030c00")
            sys.stdout.buffer.write(b"btsnoop\0" + struct.pack(">II", 1, 1002) + record * 20000)' >/tmp/big.btsnoop
            mkfifo -m 0666 /tmp/decoded
            $nobody -- $c decode btsnoop /tmp/big.btsnoop >/tmp/decoded 2>/dev/null & pid=$!
            exec 3</tmp/decoded
            head -c 1 <&3 >/dev/null
            step decode sh /tmp/sets $pid
            exec 3<&-
            wait $pid
            $nobody -- $c scan --json >/tmp/scan.out 2>/tmp/scan.err & pid=$!
            seen /tmp/scan.out C0:B1:E0:00:00:01
            step scan sh /tmp/sets $pid
            kill -INT $pid; wait $pid; s=$?
            step scanend sh -c "cat /tmp/scan.err >&2; exit $s"
            $nobody -- $c hr --timeout 15 --json >/tmp/hr.out 2>/tmp/hr.err & pid=$!
            seen /tmp/hr.out measurement
            step hr sh /tmp/sets $pid
            kill -INT $pid; wait $pid; s=$?
            step hrend sh -c "cat /tmp/hr.err >&2; exit $s"
            """#)
        #expect(result.status == 0, "vm-test: \(result.stderr)")

        let user = Self.sets(steps["user"])
        Self.expectNone(user, "scan --transport user:hci0")
        #expect(steps["userend"]?.status == 0, "\(steps["userend"]?.stderr ?? [])")

        Self.expectNone(Self.sets(steps["decode"]), "decode btsnoop")

        Self.expectKept(.netRaw, Self.sets(steps["scan"]), "scan on hci0")
        #expect(steps["scanend"]?.status == 0, "\(steps["scanend"]?.stderr ?? [])")

        Self.expectKept(.bluetooth, Self.sets(steps["hr"]), "hr on hci0")
        #expect(steps["hrend"]?.status == 0, "\(steps["hrend"]?.stderr ?? [])")
    }
}
