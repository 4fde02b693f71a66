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

// Write the marker file `name` into dir: `what`, then "host <hostname>".
// Throws std::runtime_error.
void write_marker(const std::filesystem::path& dir, const char* name, const std::string& what);

// True if dir holds the run marker and nothing but the files a run writes
// (config.ini, stats.json, stats.txt, summary.csv, error.txt, trace.json,
// events.log): an earlier run's output, safe to replace.
bool is_run_output(const std::filesystem::path& dir);

// Remove the leftovers of killed runs in dir: ".<name>.partial-<pid>" and
// ".<name>.old-<pid>" directories that hold the run marker written on this
// host and whose process no longer exists. Anything else is left alone.
// Returns how many it removed.
int remove_stale_partials(const std::filesystem::path& dir);

}  // namespace vrdmasim
