#!/usr/bin/env python3
"""Generates rawble's assigned-number tables (Sources/RawbleWire/AssignedNumbers/) from Wireshark's
value tables, which Wireshark builds from the Bluetooth SIG assigned numbers.

The input is wireshark-4.0.17-values.tsv beside this file: the lines of `tshark -G values`
(Wireshark 4.0.17, Debian 12's 4.0.17-0+deb12u3) for the fields btcommon.eir_ad.entry.uuid_16,
.company_id and .appearance (see README.md here for the exact command). Standard library only.

    Scripts/assigned-numbers/gen.py            # rewrite the three Swift files in place
    Scripts/assigned-numbers/gen.py --check    # exit 1 when a file differs from what it would write
    Scripts/assigned-numbers/gen.py --input FILE --output-dir DIR
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INPUT = os.path.join(HERE, "wireshark-4.0.17-values.tsv")
OUTPUT_DIR = os.path.join(ROOT, "Sources", "RawbleWire", "AssignedNumbers")
FIELD = "btcommon.eir_ad.entry."


def load(path):
    """{field suffix: [(value, name)] in file order}: the `V` lines of `tshark -G values`
    (V, field, value, name, tab-separated); the `E` lines (the field's table header) are skipped."""
    tables = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            kind, field, value, name = line.rstrip("\n").split("\t")[:4]
            if kind == "V" and field.startswith(FIELD):
                tables.setdefault(field[len(FIELD):], []).append((int(value), name))
    return tables


def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


BLOCKS = [("protocolAndServiceClassName", "SDP protocols and BR/EDR service classes (0x0001-0x17FF)", 0x0000, 0x17FF),
          ("serviceName", "GATT services (0x18xx)", 0x1800, 0x18FF),
          ("unitName", "units (0x27xx)", 0x2700, 0x27FF),
          ("declarationOrDescriptorName", "GATT declarations (0x28xx) and descriptors (0x29xx)", 0x2800, 0x29FF),
          ("characteristicName", "GATT characteristics (0x2Axx-0x2Cxx)", 0x2A00, 0x2CFF),
          ("memberName", "member services (0xFCxx-0xFExx) and SDO services (0xFFxx)", 0xFC00, 0xFFFF)]


def uuid_names(rows):
    u = dict(rows)
    out = ["""// Names of 16-bit UUIDs from the Bluetooth SIG Assigned Numbers (protocols, service classes,
// GATT services, units, declarations, descriptors, characteristics, member and SDO UUIDs).
// Generated from the Bluetooth SIG tables as shipped in Wireshark 4.0.17 (`tshark -G values`,
// field btcommon.eir_ad.entry.uuid_16). Do not edit by hand; regenerate and review the diff.

extension AssignedNumbers {
    /// The assigned name of a 16-bit UUID, e.g. `0x180D` → `"Heart Rate"`; `nil` when unassigned.
    public static func name(uuid16 value: UInt16) -> String? {
        switch value {"""]
    for fn, doc, lo, hi in BLOCKS:
        out.append("        case 0x%04X...0x%04X: return %s(value)" % (lo, hi, fn))
    out.append("""        default: return nil
        }
    }
""")
    for fn, doc, lo, hi in BLOCKS:
        out.append("    /// %s" % doc)
        out.append("    private static func %s(_ value: UInt16) -> String? {" % fn)
        out.append("        switch value {")
        for k in sorted(u):
            if lo <= k <= hi:
                out.append('        case 0x%04X: return "%s"' % (k, esc(u[k])))
        out.append("        default: return nil\n        }\n    }\n")
    out[-1] = out[-1].rstrip("\n")
    out.append("}")
    return "\n".join(out) + "\n"


# The company identifiers rawble names: a selection (chip makers, phone, wearable, fitness, audio
# and tracker vendors seen in advertising data). Add ids here, then regenerate.
COMPANY_IDS = [
    0x0000, 0x0001, 0x0002, 0x0003, 0x0004, 0x0006, 0x0008, 0x0009, 0x000A, 0x000D, 0x000F, 0x0013, 0x001D,
    0x0025, 0x0030, 0x0036, 0x003A, 0x003C, 0x0046, 0x0047, 0x0048, 0x004C, 0x0055, 0x0056, 0x0057, 0x0059,
    0x005D, 0x0067, 0x006B, 0x0075, 0x0077, 0x0087, 0x0089, 0x008A, 0x008C, 0x0094, 0x009E, 0x009F, 0x00C4,
    0x00CC, 0x00CD, 0x00CE, 0x00D0, 0x00D2, 0x00D7, 0x00DC, 0x00DF, 0x00E0, 0x0103, 0x0118, 0x012D, 0x012E,
    0x0131, 0x0157, 0x015D, 0x0170, 0x0171, 0x0178, 0x018E, 0x01A9, 0x01AB, 0x01B5, 0x01BA, 0x01D1, 0x01DA,
    0x01DD, 0x01F9, 0x01FC, 0x01FD, 0x020E, 0x0211, 0x022B, 0x027D, 0x02A6, 0x02B0, 0x02B2, 0x02C5, 0x02E5,
    0x02F2, 0x02FF, 0x038F, 0x0397, 0x0399, 0x03BB, 0x03E0, 0x03FF, 0x041E, 0x044A, 0x0494, 0x0499, 0x04F7,
    0x0553, 0x055D, 0x058E, 0x05A7, 0x05D6, 0x05F0, 0x05F1, 0x0600, 0x060F, 0x0611, 0x0639, 0x067C, 0x0689,
    0x068E, 0x0723, 0x072F, 0x0768, 0x079A, 0x07C9, 0x0822, 0x0837, 0x08A4, 0x08AA, 0x08C3, 0x0933, 0x094A,
    0x09A3, 0x09AC, 0x09C6, 0x0A12, 0x0B18, 0x0CC2,
]


def company_identifiers(rows):
    c = dict(rows)
    ids = COMPANY_IDS
    assert len(ids) == len(set(ids)) and ids == sorted(ids)
    out = ["""// Company identifiers (Bluetooth SIG Assigned Numbers, "Company Identifiers"): a selection of
// chip makers, phone, wearable, fitness, audio and tracker vendors seen in advertising data.
// Every id and name was taken from the SIG table as shipped in Wireshark 4.0.17
// (`tshark -G values`, field btcommon.eir_ad.entry.company_id). Add entries the same way.

extension AssignedNumbers {
    /// The registered name of a Bluetooth SIG company identifier (as used in manufacturer
    /// specific data and LMP version info), e.g. `0x0059` → `"Nordic Semiconductor ASA"`;
    /// `nil` for identifiers this table does not carry.
    public static func companyName(_ id: UInt16) -> String? {
        switch id {"""]
    for k in ids:
        out.append('        case 0x%04X: return "%s"' % (k, esc(c[k])))
    out.append("""        default: return nil
        }
    }

    /// Every company identifier ``companyName(_:)`` knows, in ascending order.
    public static let knownCompanyIdentifiers: [UInt16] = [""")
    line = "       "
    for k in ids:
        item = " 0x%04X," % k
        if len(line) + len(item) > 100:
            out.append(line)
            line = "       "
        line += item
    out.append(line)
    out.append("""    ]
}""")
    return "\n".join(out) + "\n"


# Category names where Wireshark's differ from the SIG's short ones.
APPEARANCE_FIXES = {0x00D: "Heart Rate Sensor", 0x00F: "Human Interface Device", 0x000: "Unknown"}


def appearance_names(rows):
    cats, subs = {}, {}
    for v, n in rows:
        c, s = v >> 6, v & 63
        if s == 0:
            cats[c] = APPEARANCE_FIXES.get(c) or n.replace("Generic: ", "").replace("Generic ", "")
        else:
            subs[v] = n.split(": ", 1)[1] if ": " in n else n
    out = ["""// Appearance values (Bluetooth SIG Assigned Numbers, "Appearance Values"): 10-bit category,
// 6-bit sub-category. Generated from the SIG table as shipped in Wireshark 4.0.17
// (`tshark -G values`, field btcommon.eir_ad.entry.appearance); newer categories are not
// included yet. Do not edit by hand; regenerate and review the diff.

extension AssignedNumbers {
    /// The name of an appearance category (the value's upper 10 bits), e.g. `0x00D` →
    /// `"Heart Rate Sensor"`; `nil` when this table does not know it.
    public static func appearanceCategoryName(_ category: UInt16) -> String? {
        switch category {"""]
    for c in sorted(cats):
        out.append('        case 0x%03X: return "%s"' % (c, cats[c]))
    out.append("""        default: return nil
        }
    }

    /// The name of an appearance sub-category, from the full 16-bit value, e.g. `0x0341` →
    /// `"Heart Rate Belt"`; `nil` for sub-category 0 (generic) and unknown values.
    public static func appearanceSubcategoryName(_ value: UInt16) -> String? {
        switch value {""")
    for v in sorted(subs):
        out.append('        case 0x%04X: return "%s"' % (v, subs[v]))
    out.append("""        default: return nil
        }
    }
}""")
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", default=INPUT, help="the filtered `tshark -G values` lines (default: %(default)s)")
    parser.add_argument("--output-dir", default=OUTPUT_DIR, help="where the Swift files go (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a file differs from what would be written")
    args = parser.parse_args(argv)
    tables = load(args.input)
    files = {"UUIDNames.swift": uuid_names(tables["uuid_16"]),
             "CompanyIdentifiers.swift": company_identifiers(tables["company_id"]),
             "AppearanceNames.swift": appearance_names(tables["appearance"])}
    differing = []
    for name, text in files.items():
        path = os.path.join(args.output_dir, name)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                differing.append(path)
            print(f"{path}: {'same' if same else 'DIFFERS'}")
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {path}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
