"""An independent Lab Streaming Layer inlet for rawble's tests: pylsl (PyPI; its wheel carries
liblsl), not rawble's own binding.

Reads one JSON object on stdin:
  {"config": PATH,                       lsl_api.cfg to use (LSLAPICFG), set before pylsl loads
   "timeout": SECONDS,                   for everything: resolving, opening, receiving
   "streams": [{"sourceID": S, "minimum": N}, ...]}
resolves each stream by its source_id, opens an inlet on it, pulls samples (with their
timestamps and the local_clock() at which each chunk was pulled) until every stream has at
least its minimum or the timeout passes, then closes the inlets (the outlets' consumer goes
away while rawble still pushes) and prints one JSON object:
  {"complete": B, "streams": [{"sourceID", "name", "type", "nominalRate", "channelCount",
    "channelFormat", "channels": [{"label", "unit", "type"}], "acquisition": {name: value},
    "values": [[...], ...], "timestamps": [...], "pulledAt": [...]}, ...]}
A stream that never resolves is reported with "resolved": false.
"""

import json
import os
import sys
import time
import xml.etree.ElementTree as ET


def main():
    request = json.loads(sys.stdin.read())
    os.environ["LSLAPICFG"] = request["config"]
    import pylsl  # after LSLAPICFG: liblsl reads its configuration on first use

    deadline = time.monotonic() + float(request["timeout"])
    entries = []
    for wanted in request["streams"]:
        left = max(0.1, deadline - time.monotonic())
        found = pylsl.resolve_byprop("source_id", wanted["sourceID"], 1, left)
        entry = {"sourceID": wanted["sourceID"], "minimum": int(wanted["minimum"]), "resolved": bool(found),
                 "values": [], "timestamps": [], "pulledAt": []}
        if found:
            inlet = pylsl.StreamInlet(found[0], max_buflen=60, recover=True)
            inlet.open_stream(timeout=max(0.1, deadline - time.monotonic()))
            entry["inlet"] = inlet
        entries.append(entry)

    def satisfied():
        return all(len(e["values"]) >= e["minimum"] for e in entries)

    while not satisfied() and time.monotonic() < deadline:
        for entry in entries:
            inlet = entry.get("inlet")
            if inlet is None or len(entry["values"]) >= entry["minimum"]:
                continue
            # Waits for samples (liblsl's blocking pull, bounded), not a sleep.
            samples, stamps = inlet.pull_chunk(timeout=0.05)
            now = pylsl.local_clock()
            entry["values"].extend([list(map(float, s)) for s in samples])
            entry["timestamps"].extend(stamps)
            entry["pulledAt"].extend([now] * len(stamps))

    result = []
    for entry in entries:
        inlet = entry.pop("inlet", None)
        if inlet is not None:
            info = inlet.info(timeout=max(0.1, deadline - time.monotonic()))
            root = ET.fromstring(info.as_xml())
            entry.update({
                "name": info.name(), "type": info.type(), "nominalRate": info.nominal_srate(),
                "channelCount": info.channel_count(), "channelFormat": info.channel_format(),
                "sourceIDInXML": root.findtext("source_id"),
                "channels": [{"label": c.findtext("label"), "unit": c.findtext("unit"), "type": c.findtext("type")}
                             for c in root.findall("./desc/channels/channel")],
                "acquisition": {child.tag: child.text for child in root.findall("./desc/acquisition/*")},
            })
            inlet.close_stream()
            del inlet
        result.append(entry)
    print(json.dumps({"complete": satisfied(), "streams": result}))


if __name__ == "__main__":
    main()
