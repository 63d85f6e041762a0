// RawbleAnalysis: what a heart-rate strap's numbers mean, sans I/O (values and timestamps in,
// figures out; time is an input, never read from a clock): RR artifact detection and correction
// (Lipponen & Tarvainen 2019, as Kubios and NeuroKit2 do it), time-domain HRV over any window,
// heart-rate zones and the time spent in each. One core serves the live monitor (one measurement
// at a time, bounded memory: `HeartRateAnalyzer`) and a whole session file (`SessionAnalysis`).
