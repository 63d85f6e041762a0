"""Reference figures: Google Bumble decoding the same inputs as rawble's benchmarks.

  Scripts/venv-python Benchmarks/Reference/bumble_decode.py [--seconds S] [--runs N] [--tsv]

Same inputs and the same work per item as rawble's WireWorkloads loops:
  hrm_decode       per value: HeartRateMeasurement.from_bytes, read bpm, energy, RR sum
  adv_event_parse  per report: its share of HCI_Packet.from_bytes(H4 event), then read
                   address, RSSI, data length
  adv_event_ad     as adv_event_parse, plus AdvertisingData.from_bytes(report data), the
                   local name's byte count (complete preferred) and the number of service
                   class UUIDs (all 16/32/128-bit lists, complete and incomplete)
  att_decode       per PDU: ATT_PDU.from_bytes, read the opcode
One thread, CPython. Rates are items per CPU second of this thread (time.thread_time), the
median of N runs of S CPU-seconds each after one warm-up pass; the wall-clock rate of the
same runs is shown too. --tsv prints
  name<TAB>items_per_cpu_second<TAB>ns_per_item<TAB>unit<TAB>items_per_wall_second
(the format of rawble's WireRates) instead of the table.
"""
import argparse
import os
import statistics
import sys
import time

from bumble.core import AdvertisingData
from bumble.hci import HCI_Packet
from bumble import att
from bumble.profiles.heart_rate_service import HeartRateService

INPUTS = os.path.join(os.path.dirname(__file__), "..", "Inputs")

SERVICE_UUID_LISTS = (
    AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
    AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
    AdvertisingData.COMPLETE_LIST_OF_32_BIT_SERVICE_CLASS_UUIDS,
    AdvertisingData.INCOMPLETE_LIST_OF_32_BIT_SERVICE_CLASS_UUIDS,
    AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
    AdvertisingData.INCOMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
)


def load(name):
    with open(os.path.join(INPUTS, name)) as f:
        return [bytes.fromhex(line.strip()) for line in f if line.strip()]


def measure(items, per_item, work, seconds, runs):
    """(median items per CPU second, median items per wall second)."""
    work(items)  # warm up
    cpu_rates, wall_rates = [], []
    for _ in range(runs):
        done = 0
        cpu_start, wall_start = time.thread_time(), time.perf_counter()
        while time.thread_time() - cpu_start < seconds:
            work(items)
            done += 1
        cpu = time.thread_time() - cpu_start
        wall = time.perf_counter() - wall_start
        cpu_rates.append(done * per_item / cpu)
        wall_rates.append(done * per_item / wall)
    return statistics.median(cpu_rates), statistics.median(wall_rates)


def decode_hrm(values):
    checksum = 0
    for v in values:
        m = HeartRateService.HeartRateMeasurement.from_bytes(v)
        checksum += m.heart_rate + (m.energy_expended or 0) + sum(m.rr_intervals or ())
    return checksum


def parse_reports(packets):
    checksum = 0
    for p in packets:
        event = HCI_Packet.from_bytes(p)
        for r in event.reports:
            _ = r.address
            checksum += r.rssi + len(r.data)
    return checksum


def parse_reports_ad(packets):
    checksum = 0
    for p in packets:
        event = HCI_Packet.from_bytes(p)
        for r in event.reports:
            _ = r.address
            checksum += r.rssi + len(r.data)
            ad = AdvertisingData.from_bytes(r.data)
            name = ad.get(AdvertisingData.COMPLETE_LOCAL_NAME, raw=True)
            if name is None:
                name = ad.get(AdvertisingData.SHORTENED_LOCAL_NAME, raw=True)
            checksum += len(name) if name is not None else 0
            for kind in SERVICE_UUID_LISTS:
                for uuids in ad.get_all(kind):
                    checksum += len(uuids)
    return checksum


def decode_att(items):
    checksum = 0
    for p in items:
        checksum += att.ATT_PDU.from_bytes(p).op_code
    return checksum


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tsv", action="store_true", help="machine-readable lines (see the docstring)")
    args = parser.parse_args()

    hrm = load("hrm.hex")
    events = load("adv-reports.hex")
    report_count = sum(e[4] for e in events)
    pdus = load("att.hex")
    workloads = [
        ("hrm_decode", "decode", "bumble: HRM decodes", hrm, len(hrm), decode_hrm),
        ("adv_event_parse", "report", "bumble: advertising reports (event only)", events, report_count, parse_reports),
        ("adv_event_ad", "report", "bumble: advertising reports (event + AD)", events, report_count, parse_reports_ad),
        ("att_decode", "pdu", "bumble: ATT PDU decodes", pdus, len(pdus), decode_att),
    ]
    if args.tsv:
        print(f"# bumble: {len(hrm)} HRM values, {len(events)} H4 events with {report_count} reports, "
              f"{len(pdus)} ATT PDUs; {args.runs} runs of {args.seconds} CPU-s each, median", file=sys.stderr)
    for name, unit, label, items, per_item, work in workloads:
        cpu, wall = measure(items, per_item, work, args.seconds, args.runs)
        if args.tsv:
            print(f"{name}\t{cpu:.0f}\t{1e9 / cpu:.1f}\t{unit}\t{wall:.0f}", flush=True)
        else:
            print(f"{label:44s} {cpu:12,.0f} /CPU-s ({1e9 / cpu:7.0f} ns each)  {wall:12,.0f} /wall-s", flush=True)


if __name__ == "__main__":
    main()
