"""Independent readers of what `rawble report --export` writes: pyedflib (EDFlib) for EDF+,
numpy and NeuroKit2 for RR text. The references the export tests compare rawble with.

Reads one JSON object a line on stdin and prints one JSON object a line, in the same order:
  {"edf": PATH}    the file as pyedflib reads it: file type, header fields, each signal's
                   label, rate, dimension, physical and digital range and samples (digital and
                   physical), the start date/time (with EDFlib's subsecond, 100 ns units), the
                   data records and the annotations (onset s, duration s, text)
  {"rr": PATH, "format": "rr"|"kubios"|"ibi"}
                   the intervals as numpy reads the text (`#` lines are comments; ibi: comma-
                   separated time and IBI in s), in ms, with the times (ibi), and NeuroKit2's
                   hrv_time of the series (MeanNN, SDNN, RMSSD, pNN50) from peaks at 100 kHz
Exits 69 with one line naming Scripts/bootstrap when pyedflib or NeuroKit2 is not installed.
Run through Scripts/venv-python: Scripts/venv-python Scripts/python/export_reference.py < requests
"""
import json
import sys
import warnings

try:
    import numpy as np
    import neurokit2 as nk
    import pyedflib
except ImportError as error:  # pragma: no cover - the environment is incomplete
    print(f"rawble: pyedflib or neurokit2 is not installed in the project's Python environment ({error}): run Scripts/bootstrap",
          file=sys.stderr)
    sys.exit(69)


def edf(path):
    reader = pyedflib.EdfReader(path)
    try:
        count = reader.signals_in_file
        onsets, durations, texts = reader.readAnnotations()
        start = reader.getStartdatetime()
        return {
            "filetype": int(reader.filetype),
            "records": int(reader.datarecords_in_file),
            "recordDuration": float(reader.datarecord_duration),
            "duration": float(reader.getFileDuration()),
            "equipment": reader.getEquipment(),
            "start": [start.year, start.month, start.day, start.hour, start.minute, start.second],
            "subsecond": int(reader.starttime_subsecond),
            "labels": reader.getSignalLabels(),
            "rates": [float(reader.getSampleFrequency(i)) for i in range(count)],
            "dimensions": [reader.getPhysicalDimension(i) for i in range(count)],
            "physicalMin": [float(reader.getPhysicalMinimum(i)) for i in range(count)],
            "physicalMax": [float(reader.getPhysicalMaximum(i)) for i in range(count)],
            "digitalMin": [int(reader.getDigitalMinimum(i)) for i in range(count)],
            "digitalMax": [int(reader.getDigitalMaximum(i)) for i in range(count)],
            "digital": [[int(v) for v in reader.readSignal(i, digital=True)] for i in range(count)],
            "physical": [[float(v) for v in reader.readSignal(i)] for i in range(count)],
            "annotations": [[float(o), float(d), str(t)] for o, d, t in zip(onsets, durations, texts)],
        }
    finally:
        reader.close()


def rr(path, layout):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if layout == "ibi":
            table = np.loadtxt(path, delimiter=",", ndmin=2)
            times, intervals = table[:, 0], table[:, 1] * 1000
        else:
            intervals = np.loadtxt(path, comments="#", ndmin=1)
            times = None
        peaks = np.concatenate(([0], np.cumsum(np.round(intervals * 100)))).astype(np.int64)
        out = nk.hrv_time(peaks, sampling_rate=100000)
    figures = {key: float(out["HRV_" + key].iloc[0]) for key in ("MeanNN", "SDNN", "RMSSD", "pNN50")}
    result = {"intervals": [float(v) for v in intervals], "hrv": figures}
    if times is not None:
        result["times"] = [float(v) for v in times]
    return result


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "edf" in request:
            print(json.dumps(edf(request["edf"])), flush=True)
        else:
            print(json.dumps(rr(request["rr"], request.get("format", "rr"))), flush=True)


if __name__ == "__main__":
    main()
