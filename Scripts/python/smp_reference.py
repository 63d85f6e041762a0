"""Checks pairing transcripts against Google Bumble's own SMP cryptography (bumble.crypto).

Reads a JSON file (argv[1]): a list of transcripts, each written by RawbleSMPTests from two of
rawble's pairing engines on one link:
  {"method": "justWorks" | "numericComparison" | "passkey" | "legacy",
   "initiator": {"address": "C00000000001", "type": 0, "privateKey": HEX | null},
   "responder": {...},
   "request": [io, oob, authReq, maxKeySize, initKeys, respKeys],   # the Pairing Request's 6 bytes
   "response": [...],
   "keySize": 16, "passkey": N | null,
   "publicKeys": {"initiator": [X, Y], "responder": [X, Y]},        # as sent, big-endian hex
   "confirms": [[fromInitiator, HEX], ...], "randoms": [[fromInitiator, HEX], ...],
   "checks": [[fromInitiator, HEX], ...],
   "linkKey": HEX, "comparison": N | null}
Every 128- and 256-bit value is big-endian hex, as the specification prints it. Bumble's
functions take the wire's little-endian order; the conversion is here.

Prints one JSON line per transcript: {"mismatches": ["what differs", ...]} (empty: all agree).
Exits 3 with one line when Bumble is missing (run Scripts/bootstrap).
"""

import json
import sys

try:
    from bumble import crypto
except ImportError:
    print("smp_reference: Bumble is not installed in this Python (run Scripts/bootstrap)", file=sys.stderr)
    sys.exit(3)


def le(hex_value, size=16):
    return bytes.fromhex(hex_value.rjust(size * 2, "0"))[::-1]


def be_hex(little_endian):
    return little_endian[::-1].hex()


def typed_address(side):
    """The 56-bit A1/A2 of f5 and f6, little-endian: the address, then its type."""
    return bytes.fromhex(side["address"])[::-1] + bytes([side["type"]])


def check(transcript):
    mismatches = []
    init, resp = transcript["initiator"], transcript["responder"]
    request, response = transcript["request"], transcript["response"]
    confirms = transcript["confirms"]
    randoms = transcript["randoms"]
    link_key = transcript["linkKey"]
    key_size = transcript["keySize"]

    def masked(big_endian_hex):
        value = int(big_endian_hex, 16)
        return "%032x" % (value & ((1 << (8 * key_size)) - 1))

    def expect(what, ours, bumbles):
        if ours.lower().rjust(32, "0") != bumbles.lower().rjust(32, "0"):
            mismatches.append(f"{what}: rawble {ours}, Bumble {bumbles}")

    if transcript["method"] == "legacy":
        tk = (transcript["passkey"] or 0).to_bytes(16, "little")
        preq = bytes([0x01] + request)
        pres = bytes([0x02] + response)
        ia, ra = bytes.fromhex(init["address"])[::-1], bytes.fromhex(resp["address"])[::-1]
        mconfirm, sconfirm = confirms[0][1], confirms[1][1]
        mrand, srand = randoms[0][1], randoms[1][1]
        expect("Mconfirm (c1)", mconfirm,
               be_hex(crypto.c1(tk, le(mrand), preq, pres, init["type"], resp["type"], ia, ra)))
        expect("Sconfirm (c1)", sconfirm,
               be_hex(crypto.c1(tk, le(srand), preq, pres, init["type"], resp["type"], ia, ra)))
        expect("STK (s1)", link_key, masked(be_hex(crypto.s1(tk, le(srand), le(mrand)))))
        return mismatches

    pka, pkb = transcript["publicKeys"]["initiator"], transcript["publicKeys"]["responder"]
    key_a = crypto.EccKey.from_private_key_bytes(bytes.fromhex(init["privateKey"]))
    key_b = crypto.EccKey.from_private_key_bytes(bytes.fromhex(resp["privateKey"]))
    expect("initiator's public key X", pka[0], key_a.x.hex())
    expect("responder's public key X", pkb[0], key_b.x.hex())
    dh_a = key_a.dh(bytes.fromhex(pkb[0]), bytes.fromhex(pkb[1]))
    dh_b = key_b.dh(bytes.fromhex(pka[0]), bytes.fromhex(pka[1]))
    if dh_a != dh_b:
        mismatches.append("the two sides' DHKeys differ in Bumble")
    w = dh_a[::-1]
    u, v = le(pka[0], 32), le(pkb[0], 32)

    if transcript["method"] == "passkey":
        passkey = transcript["passkey"]
        r = passkey.to_bytes(16, "little")
        for round_index in range(20):
            z = bytes([0x80 | ((passkey >> round_index) & 1)])
            ca, cb = confirms[2 * round_index][1], confirms[2 * round_index + 1][1]
            na, nb = randoms[2 * round_index][1], randoms[2 * round_index + 1][1]
            expect(f"Ca{round_index} (f4)", ca, be_hex(crypto.f4(u, v, le(na), z)))
            expect(f"Cb{round_index} (f4)", cb, be_hex(crypto.f4(v, u, le(nb), z)))
        na, nb = randoms[-2][1], randoms[-1][1]
    else:
        r = bytes(16)
        na, nb = randoms[0][1], randoms[1][1]
        expect("Cb (f4)", confirms[0][1], be_hex(crypto.f4(v, u, le(nb), bytes([0]))))
        if transcript["method"] == "numericComparison":
            value = crypto.g2(u, v, le(na), le(nb)) % 1_000_000
            if value != transcript["comparison"]:
                mismatches.append(f"numeric comparison (g2): rawble {transcript['comparison']}, Bumble {value}")

    a1, a2 = typed_address(init), typed_address(resp)
    mac_key, ltk = crypto.f5(w, le(na), le(nb), a1, a2)
    io_a = bytes([request[0], request[1], request[2]])
    io_b = bytes([response[0], response[1], response[2]])
    checks = transcript["checks"]
    expect("Ea (f6)", checks[0][1], be_hex(crypto.f6(mac_key, le(na), le(nb), r, io_a, a1, a2)))
    expect("Eb (f6)", checks[1][1], be_hex(crypto.f6(mac_key, le(nb), le(na), r, io_b, a2, a1)))
    expect("LTK (f5)", link_key, masked(be_hex(ltk)))
    return mismatches


def main():
    with open(sys.argv[1]) as file:
        transcripts = json.load(file)
    for transcript in transcripts:
        print(json.dumps({"mismatches": check(transcript)}))


if __name__ == "__main__":
    main()
