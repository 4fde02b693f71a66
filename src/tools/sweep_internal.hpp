// What the files of the sweep tool share (src/tools/sweep.hpp is its API):
// point ids, the plan file beside a sweep's results, shard names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "src/tools/sweep.hpp"

namespace vrdmasim::sweep_detail {

namespace fs = std::filesystem;

using Assignments = std::vector<std::pair<std::string, std::string>>;

std::string trim(const std::string& s);
std::uint64_t fnv1a64(const std::string& s);
// The index encoded in a point id ("p0003-..." -> 3), or -1.
long point_index_of(const std::string& id);

// The plan file beside a sweep's results (OUT/.vrdmasim-plan).
constexpr const char* kPlanFile = ".vrdmasim-plan";
struct PlanFile {
    std::string path, fingerprint, label;
    std::vector<std::string> ids;   // every point of the sweep, by index
};
std::string plan_text(const SweepPlan& plan);
// Read a plan file; false when absent; ConfigError when it is there but not a plan.
bool read_plan_file(const fs::path& path, PlanFile& out);
// The plan that describes a results file: beside it, or, for a shard's file
// in OUT/shards, in OUT.
fs::path plan_path_for(const std::string& results);
// Write `text` to `path` through a unique temporary and a rename (several
// shards may write the same plan at once).
bool write_atomically(const fs::path& path, const std::string& text, std::string& err);

// "I-of-N"
std::string shard_name(int index, int count);
// results.csv of a directory that shards share: the merge of every
// shards/results-<I>-of-<count>.csv there. Returns the number of rows written.
std::size_t compose_shards(const fs::path& out, const fs::path& shards_dir, int count);

// The ETA of a sweep (its progress line). Each point weighs what its
// check planned (run --check: "planned: T transfers, B bytes of payload"):
// T plus its packets, B in packets of 256 bytes of payload (at least one a
// transfer when B > 0): one for each transfer's own costs, one for each
// packet, as the host time of a run grows with its packets (`vrdmasim
// bench`). 0 (unknown) when the output plans nothing or does not know its
// bytes ("T transfers (their bytes not known in advance)").
double point_weight(const std::string& check_output);
// Points of unknown weight (0: not checked, or planning nothing) weigh the
// mean of the known ones, or 1 each when none is known.
void fill_unknown_weights(std::vector<double>& weights);
// Seconds left: `elapsed` took the points of `finished` weight that
// finished in this invocation, the points of `remaining` weight (not yet
// finished) take as long per weight. -1 when unknown (nothing finished yet).
double eta_seconds(double elapsed, double finished, double remaining);

// The warnings a point's run printed (its log's "vrdmasim: warning: " lines
// and SystemC's "Warning: " ones), each without its prefix.
std::vector<std::string> warnings_in_log(const std::string& log_text);
// A warning's kind, what the sweep counts: its text up to its first ": "
// (or " (", ", ", "; "), numbers written N, at most 60 characters:
// "link order inverted: 12 packet-hop(s) ..." is "link order inverted".
std::string warning_kind(const std::string& warning);
// The warnings of the points (point id -> its warnings), by kind: "2 of 24
// points warned: 'a' ×3, 'b' ×1" (a kind counted once per warning), or ""
// when none warned; `total` the points of the sweep.
std::string warnings_line(const std::vector<std::pair<std::string, std::vector<std::string>>>& points,
                          std::size_t total);

}   // namespace vrdmasim::sweep_detail
