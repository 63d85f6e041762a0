# Generates rawble's assigned-number tables from Wireshark's value tables (tshark -G values),
# which Wireshark builds from the Bluetooth SIG assigned numbers.
import sys
def load(path):
    rows=[l.rstrip('\n').split('\t') for l in open(path)][1:]
    return {int(v):n for v,n in rows}
def esc(s): return s.replace('\\','\\\\').replace('"','\\"')
u=load('/tmp/adv-uuid16.tsv')
c=load('/tmp/adv-companies.tsv')
blocks=[("protocolAndServiceClassName","SDP protocols and BR/EDR service classes (0x0001-0x17FF)",0x0000,0x17FF),
        ("serviceName","GATT services (0x18xx)",0x1800,0x18FF),
        ("unitName","units (0x27xx)",0x2700,0x27FF),
        ("declarationOrDescriptorName","GATT declarations (0x28xx) and descriptors (0x29xx)",0x2800,0x29FF),
        ("characteristicName","GATT characteristics (0x2Axx-0x2Cxx)",0x2A00,0x2CFF),
        ("memberName","member services (0xFCxx-0xFExx) and SDO services (0xFFxx)",0xFC00,0xFFFF)]
out=[]
out.append("""// Names of 16-bit UUIDs from the Bluetooth SIG Assigned Numbers (protocols, service classes,
// GATT services, units, declarations, descriptors, characteristics, member and SDO UUIDs).
// Generated from the Bluetooth SIG tables as shipped in Wireshark 4.0.17 (`tshark -G values`,
// field btcommon.eir_ad.entry.uuid_16). Do not edit by hand; regenerate and review the diff.

extension AssignedNumbers {
    /// The assigned name of a 16-bit UUID, e.g. `0x180D` → `"Heart Rate"`; `nil` when unassigned.
    public static func name(uuid16 value: UInt16) -> String? {
        switch value {""")
for fn,doc,lo,hi in blocks:
    out.append("        case 0x%04X...0x%04X: return %s(value)" % (lo,hi,fn))
out.append("""        default: return nil
        }
    }
""")
for fn,doc,lo,hi in blocks:
    out.append("    /// %s" % doc)
    out.append("    private static func %s(_ value: UInt16) -> String? {" % fn)
    out.append("        switch value {")
    for k in sorted(u):
        if lo<=k<=hi:
            out.append('        case 0x%04X: return "%s"' % (k, esc(u[k])))
    out.append("        default: return nil\n        }\n    }\n")
out[-1]=out[-1].rstrip('\n')
out.append("}")
open(sys.argv[1],'w').write('\n'.join(out)+'\n')

ids=[0x0000,0x0001,0x0002,0x0003,0x0004,0x0006,0x0008,0x0009,0x000A,0x000D,0x000F,0x0013,0x001D,0x0025,0x0030,0x0036,0x003A,0x003C,0x0046,0x0047,0x0048,0x004C,0x0055,0x0056,0x0057,0x0059,0x005D,0x0067,0x006B,0x0075,0x0077,0x0087,0x0089,0x008A,0x008C,0x0094,0x009E,0x009F,0x00C4,0x00CC,0x00CD,0x00CE,0x00D0,0x00D2,0x00D7,0x00DC,0x00DF,0x00E0,0x0103,0x0118,0x012D,0x012E,0x0131,0x0157,0x015D,0x0170,0x0171,0x0178,0x018E,0x01A9,0x01AB,0x01B5,0x01BA,0x01D1,0x01DA,0x01DD,0x01F9,0x01FC,0x01FD,0x020E,0x0211,0x022B,0x027D,0x02A6,0x02B0,0x02B2,0x02C5,0x02E5,0x02F2,0x02FF,0x038F,0x0397,0x0399,0x03BB,0x03E0,0x03FF,0x041E,0x044A,0x0494,0x0499,0x04F7,0x0553,0x055D,0x058E,0x05A7,0x05D6,0x05F0,0x05F1,0x0600,0x060F,0x0611,0x0639,0x067C,0x0689,0x068E,0x0723,0x072F,0x0768,0x079A,0x07C9,0x0822,0x0837,0x08A4,0x08AA,0x08C3,0x0933,0x094A,0x09A3,0x09AC,0x09C6,0x0A12,0x0B18,0x0CC2]
assert len(ids)==len(set(ids)) and ids==sorted(ids)
out=["""// Company identifiers (Bluetooth SIG Assigned Numbers, "Company Identifiers"): a selection of
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
line="       "
for k in ids:
    item=" 0x%04X," % k
    if len(line)+len(item)>100:
        out.append(line); line="       "
    line+=item
out.append(line)
out.append("""    ]
}""")
open(sys.argv[2],'w').write('\n'.join(out)+'\n')
print(len(ids))
