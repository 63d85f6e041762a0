"""NeuroKit2's view of an RR series: the independent reference RawbleAnalysis is tested against.

Reads series of RR intervals in ms on stdin, one series a line (values separated by spaces),
turns each into R-peak sample indices at 1000 Hz (the first peak at 0, then the cumulative sum of
the intervals rounded to whole ms), and prints one JSON object a line, in the same order:
  raw        hrv_time's MeanNN, SDNN, RMSSD, pNN50, pNN20, MinNN, MaxNN and MeanHR (60000 / MeanNN)
             on the series as given
  corrected  the same after signal_fixpeaks(method="Kubios", iterative=True)
  corrected_rr   the corrected series, ms
  first_pass     the artifacts the first classification pass finds (iterative=False), as peak
                 indices by kind (peak k ends RR interval k - 1)
  last_pass      the artifacts signal_fixpeaks reports with iterative=True (its last applied pass)
Exits 69 with one line naming Scripts/bootstrap when NeuroKit2 is not installed.
Run through Scripts/venv-python: Scripts/venv-python Scripts/python/hrv_reference.py < series.txt
"""
import json
import sys
import warnings

try:
    import numpy as np
    import neurokit2 as nk
except ImportError as error:  # pragma: no cover - the environment is incomplete
    print(f"rawble: neurokit2 is not installed in the project's Python environment ({error}): run Scripts/bootstrap",
          file=sys.stderr)
    sys.exit(69)

KINDS = ("ectopic", "missed", "extra", "longshort")


def figures(peaks):
    out = nk.hrv_time(peaks, sampling_rate=1000)
    row = {key: float(out["HRV_" + key].iloc[0]) for key in ("MeanNN", "SDNN", "RMSSD", "pNN50", "pNN20", "MinNN", "MaxNN")}
    row["MeanHR"] = 60000.0 / row["MeanNN"]
    return {key: (value if np.isfinite(value) else None) for key, value in row.items()}


def kinds(artifacts):
    return {kind: [int(i) for i in artifacts[kind]] for kind in KINDS}


def analyse(line):
    rr = np.array([float(token) for token in line.split()])
    peaks = np.concatenate(([0], np.cumsum(np.round(rr)))).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, _ = nk.signal_fixpeaks(peaks, sampling_rate=1000, iterative=False, method="Kubios")
        last, cleaned = nk.signal_fixpeaks(peaks, sampling_rate=1000, iterative=True, method="Kubios")
        cleaned = np.asarray(cleaned, dtype=np.int64)
        result = {
            "raw": figures(peaks),
            "corrected": figures(cleaned),
            "corrected_rr": [int(v) for v in np.diff(cleaned)],
            "first_pass": kinds(first),
            "last_pass": kinds(last),
        }
    return result


def main():
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(analyse(line)) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
