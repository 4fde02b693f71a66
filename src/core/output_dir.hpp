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
extern const char* const kRunMarker;   // ".vrdmasim-run"
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
// Throws std::runtime_error, with the system's reason.
void write_marker(const std::filesystem::path& dir, const char* name, const std::string& what);

// True if dir holds the run marker and nothing but the files a run writes
// (config.ini, stats.json, stats.txt, summary.csv, error.txt, trace.json,
// events.log, timeseries.csv, an MPI program's program[-job<j>].stdout and .stderr, and a report.html that
// is_our_report): an earlier run's
// output, safe to replace.
bool is_run_output(const std::filesystem::path& dir);

// A run claims its output directory when it starts and publishes into it
// when it ends, replacing only what it can prove is a run's output: a
// directory made at that path, or a file put into it, while the run
// simulates is never deleted.
//
// claim_run_output: `target` absent (left absent: publish_run_output
// renames the outputs to it, never over what appeared there meanwhile),
// empty (the marker written into it) or an earlier run's output
// (is_run_output). Returns "" or why the path cannot be used; throws
// std::runtime_error if the marker cannot be written (a full disk).
std::string claim_run_output(const std::filesystem::path& target);

// publish_run_output: move the finished outputs in `tmp` to `target`. What is
// at `target` then is moved aside and removed only if it is still a run's
// output (our claim, or an earlier run's); anything else is put back
// untouched and the outputs stay in `tmp`. Returns "" or why it did not
// publish (the message names where the outputs are).
std::string publish_run_output(const std::filesystem::path& tmp, const std::filesystem::path& target);

// rename(2) that never replaces what is at `to` (renameat2 RENAME_NOREPLACE;
// where the file system lacks it, a check and a rename). Returns 0 or errno.
int rename_noreplace(const std::filesystem::path& from, const std::filesystem::path& to);

// `vrdmasim merge` replaces an existing OUT.csv only if it wrote it: beside
// each output it writes a mark, ".<name>.vrdmasim-merge", holding a hash of
// the output's bytes. A file without the mark, or changed since (edited,
// or another file renamed over it), is somebody else's.
bool is_merge_output(const std::filesystem::path& file);
// Write the mark for `file` as it is now. Returns "" or why not.
std::string write_merge_mark(const std::filesystem::path& file);

// Write `text` to `path` whole: a temporary beside it (write(2), fsync),
// renamed over it. Returns "" or why not, with the system's reason (a full
// disk says so). Nothing half-written is left behind.
std::string write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Remove the leftovers of killed runs in dir: ".<name>.partial-<pid>" and
// ".<name>.old-<pid>" directories that hold the run marker written on this
// host and whose process no longer exists. Anything else is left alone.
// Returns how many it removed.
int remove_stale_partials(const std::filesystem::path& dir);

}   // namespace vrdmasim
