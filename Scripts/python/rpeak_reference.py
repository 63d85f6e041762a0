"""NeuroKit2's view of an ECG's R peaks: the independent reference RawbleAnalysis's R-peak detector is tested against.

Reads requests on stdin, one JSON object a line, and prints one JSON object a line, in the same order.
A request either simulates an ECG or brings its own samples:
  {"seed": 3, "duration": 150, "heart_rate": 72, "sampling_rate": 130, "noise": 0.05}
      nk.ecg_simulate(duration, sampling_rate, heart_rate=heart_rate, noise=noise,
      random_state=seed, method="ecgsyn"), turned into integer µV (mV × 1000, rounded) as a
      Polar H10 sends them
  {"ecg": [812, 790, ...], "sampling_rate": 130}
      the samples as given
Optional in either: "cleaned": true adds NeuroKit2's cleaned signal to the answer.
Each answer:
  ecg       the samples the peaks were found in (integer µV for a simulated ECG)
  peaks     NeuroKit2's R peaks, sample indices: nk.ecg_peaks(nk.ecg_clean(ecg, sampling_rate),
            sampling_rate) with the default method ("neurokit", as nk.ecg_process runs it)
  cleaned   nk.ecg_clean(ecg, sampling_rate) (method "neurokit"), when asked for
Exits 69 with one line naming Scripts/bootstrap when NeuroKit2 is not installed.
Run through Scripts/venv-python: Scripts/venv-python Scripts/python/rpeak_reference.py < requests.jsonl
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


def simulated(request, sampling_rate):
    ecg = nk.ecg_simulate(
        duration=float(request["duration"]),
        sampling_rate=sampling_rate,
        heart_rate=float(request["heart_rate"]),
        noise=float(request.get("noise", 0.0)),
        random_state=int(request["seed"]),
        method="ecgsyn",
    )
    return np.round(np.asarray(ecg) * 1000.0)


def analyse(line):
    request = json.loads(line)
    sampling_rate = int(request.get("sampling_rate", 130))
    if "ecg" in request:
        ecg = np.asarray(request["ecg"], dtype=np.float64)
    else:
        ecg = simulated(request, sampling_rate)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cleaned = nk.ecg_clean(ecg, sampling_rate=sampling_rate)
        _, info = nk.ecg_peaks(cleaned, sampling_rate=sampling_rate)
    result = {
        "ecg": [int(v) if float(v).is_integer() else float(v) for v in ecg],
        "peaks": [int(p) for p in info["ECG_R_Peaks"]],
        "sampling_rate": sampling_rate,
    }
    if request.get("cleaned"):
        result["cleaned"] = [float(v) for v in cleaned]
    return result


def main():
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(analyse(line)) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
