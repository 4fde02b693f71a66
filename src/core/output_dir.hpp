// Output directories that vrdmasim may replace or clean up: only those it can
// prove it wrote, by a marker file it puts there first.
//
// Part of the simulator core; knows nothing about models.
#pragma once

#include <filesystem>
#include <string>

namespace vrdmasim {

// The marker a run writes into its output directory (first, into the
// temporary ".<out>.partial-<pid>" directory, before any other output).
extern const char* const kRunMarker;     // ".vrdmasim-run"
// The marker and lock file of a sweep's output directory.
extern const char* const kSweepMarker;   // ".vrdmasim-sweep"

// The run report (`vrdmasim run --report`) and the mark its <head> carries,
// in its first kilobyte: a report.html without the mark is somebody else's
// file, and a directory holding one is not a run's output.
extern const char* const kReportFile;   // "report.html"
extern const char* const kReportMark;   // <meta name="generator" content="vrdmasim run --report">

// Whether `file` is a report vrdmasim wrote (a regular file with the mark).
bool is_our_report(const std::filesystem::path& file);

// Write the marker file `name` into dir: `what`, then "host <hostname>".
// Throws std::runtime_error.
void write_marker(const std::filesystem::path& dir, const char* name, const std::string& what);

// True if dir holds the run marker and nothing but the files a run writes
// (config.ini, stats.json, stats.txt, summary.csv, error.txt, trace.json,
// events.log, and a report.html that is_our_report): an earlier run's
// output, safe to replace.
bool is_run_output(const std::filesystem::path& dir);

// Remove the leftovers of killed runs in dir: ".<name>.partial-<pid>" and
// ".<name>.old-<pid>" directories that hold the run marker written on this
// host and whose process no longer exists. Anything else is left alone.
// Returns how many it removed.
int remove_stale_partials(const std::filesystem::path& dir);

}  // namespace vrdmasim
