#!/usr/bin/env python3
"""Reference figures: Google Bumble decoding the same inputs as rawble's benchmarks.

  python3 Benchmarks/Reference/bumble_decode.py [--seconds S]

Per input: HRM values decoded/s (HeartRateMeasurement.from_bytes), advertising reports
parsed/s (HCI_Packet.from_bytes on the H4 event, then every report's AD structures with
AdvertisingData.from_bytes), ATT PDUs decoded/s (ATT_PDU.from_bytes). One core, CPython.
"""
import argparse
import os
import time

from bumble.core import AdvertisingData
from bumble.hci import HCI_Packet
from bumble import att
from bumble.profiles.heart_rate_service import HeartRateService

INPUTS = os.path.join(os.path.dirname(__file__), "..", "Inputs")


def load(name):
    with open(os.path.join(INPUTS, name)) as f:
        return [bytes.fromhex(line.strip()) for line in f if line.strip()]


def rate(label, items, per_item, work, seconds):
    work(items)  # warm up
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        work(items)
        done += 1
    elapsed = time.perf_counter() - start
    per_second = done * per_item / elapsed
    print(f"{label:48s} {per_second:14,.0f} /s   ({1e9 / per_second:8.0f} ns each)")
    return per_second


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()

    hrm = load("hrm.hex")
    def decode_hrm(values):
        for v in values:
            HeartRateService.HeartRateMeasurement.from_bytes(v)
    rate("bumble: HRM decodes", hrm, len(hrm), decode_hrm, args.seconds)

    events = load("adv-reports.hex")
    report_count = sum(e[4] for e in events)
    def parse_reports(packets):
        for p in packets:
            event = HCI_Packet.from_bytes(p)
            for r in event.reports:
                _ = (r.address, r.rssi, r.data)
    rate("bumble: advertising reports (event only)", events, report_count, parse_reports, args.seconds)
    def parse_reports_ad(packets):
        for p in packets:
            event = HCI_Packet.from_bytes(p)
            for r in event.reports:
                AdvertisingData.from_bytes(r.data)
    rate("bumble: advertising reports (event + AD)", events, report_count, parse_reports_ad, args.seconds)

    pdus = load("att.hex")
    def decode_att(items):
        for p in items:
            att.ATT_PDU.from_bytes(p)
    rate("bumble: ATT PDU decodes", pdus, len(pdus), decode_att, args.seconds)


if __name__ == "__main__":
    main()
