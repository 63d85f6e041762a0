// RawbleReport: a recorded heart-rate session read back and drawn, sans I/O. `SessionFileReader`
// reads the CSV or JSON lines `rawble hr` writes, line by line (bounded memory), into typed
// samples and says what it left out; `SessionPlot` draws heart rate by zone, the RR tachogram,
// the Poincaré plot and time in zones as one SVG document.
