import sys
rows=[l.rstrip('\n').split('\t') for l in open('/tmp/adv-values.txt') if '\tbtcommon.eir_ad.entry.appearance\t' in l]
cats={}; subs={}
fix={0x00D:"Heart Rate Sensor",0x00F:"Human Interface Device",0x000:"Unknown"}
for r in rows[1:]:
    v=int(r[2]); n=r[3]; c=v>>6; s=v&63
    if s==0:
        name=fix.get(c) or n.replace("Generic: ","").replace("Generic ","")
        cats[c]=name
    else:
        subs[v]=n.split(": ",1)[1] if ": " in n else n
out=["""// Appearance values (Bluetooth SIG Assigned Numbers, "Appearance Values"): 10-bit category,
// 6-bit sub-category. Generated from the SIG table as shipped in Wireshark 4.0.17
// (`tshark -G values`, field btcommon.eir_ad.entry.appearance); newer categories are not
// included yet. Do not edit by hand; regenerate and review the diff.

extension AssignedNumbers {
    /// The name of an appearance category (the value's upper 10 bits), e.g. `0x00D` →
    /// `"Heart Rate Sensor"`; `nil` when this table does not know it.
    public static func appearanceCategoryName(_ category: UInt16) -> String? {
        switch category {"""]
for c in sorted(cats): out.append('        case 0x%03X: return "%s"' % (c,cats[c]))
out.append("""        default: return nil
        }
    }

    /// The name of an appearance sub-category, from the full 16-bit value, e.g. `0x0341` →
    /// `"Heart Rate Belt"`; `nil` for sub-category 0 (generic) and unknown values.
    public static func appearanceSubcategoryName(_ value: UInt16) -> String? {
        switch value {""")
for v in sorted(subs): out.append('        case 0x%04X: return "%s"' % (v,subs[v]))
out.append("""        default: return nil
        }
    }
}""")
open(sys.argv[1],'w').write('\n'.join(out)+'\n')
