// Parameter sweeps: the cartesian product of listed values, one `run`
// process per point, N at a time, resumable, shardable across machines.
//
// One of the tools (src/tools); knows nothing about models. Its files:
// sweep_plan.cpp (sweep files, points, the plan file), sweep_run.cpp
// (running points as child processes, resuming, locks), sweep_shard.cpp
// (the shard from a Slurm array or an MPI job), sweep_merge.cpp (merging
// results, replications).
//
// A sweep file is an INI config in which a value holding commas outside
// double quotes is a list of values to sweep (`a, "b, c"`: two values):
//
//     [sweep]
//     base = ../default.ini other.ini   # optional: configs every point starts from,
//                                       # paths relative to the sweep file
//     label = cold                      # optional: names this sweep's rows in results.csv
//     [workload]
//     message-size = 4KiB, 64KiB, 1MiB   # swept
//     [dma]
//     block-size = 4KiB                   # fixed for every point
//
// Every path in it is relative to the sweep file: the bases, and the values
// of path-valued parameters (ParamDecl::path).
//
// Points are numbered in row-major order of the swept keys as they appear in
// the file (the last key varies fastest). Before any runs, each point that
// is not done is checked (`EXE run ... --check`, --jobs at a time): one a
// run refuses stops the sweep (exit 2, nothing run or written). Each point
// then runs as
//     EXE run BASE... --section.key=value ... --origin=section.key=FILE:LINE ...
//         --out OUT/points/<point-id> --quiet
// (point_arguments) with its stdout and stderr in OUT/logs/<point-id>.log.
// Its warnings are counted by kind on stderr at the end and written to
// OUT/warnings.txt (a shard's: OUT/shards/warnings-<I>-of-<N>.txt). A point counts as done
// when OUT/points/<point-id>/summary.csv exists; a new invocation on the same
// OUT skips done points (resume). The point id is "p<index, 4 digits>-<8 hex
// digits of a hash of its assignments and label>", so a changed sweep file
// never mistakes an old point for a new one, and sweeps that differ only in
// their label never share a point id.
//
// OUT/results.csv is rewritten after every finished point: columns
// `point`, then `label` (only when the sweep file sets [sweep] label: its
// value on every row, so that several sweeps merged into one file can be told
// apart), then the swept keys (section.key), then `status` (ok, failed,
// mismatch), `exit_code`, `error` (the last non-empty line of the point's log
// for a failed point, empty otherwise), then the summary.csv columns (the
// union over all done points, in order of first appearance). One row per point
// of this shard that has run (in this or an earlier invocation), sorted by
// point index. A point whose run exits 1 (data mismatch: outputs written but
// data wrong) is status "mismatch" and keeps its metrics; any other non-zero
// exit is "failed".
//
// Shards: --shard I/N runs only the points whose index % N == I (0 <= I < N);
// without --shard, a Slurm array task or an MPI rank takes its shard from the
// environment (shard_from_environment). A sharded sweep writes its rows to
// OUT/shards/results-<I>-of-<N>.csv and then rewrites OUT/results.csv as the
// merge of every shard file of that N in OUT: shards may share one OUT (the
// ranks of one mpirun, the tasks of one array), each locking only its own
// shard (OUT/shards/<I>-of-<N>.lock) and holding the sweep marker shared, so
// an unsharded sweep on the same OUT, or the same shard twice, refuses. The
// last shard to finish leaves the whole sweep in results.csv.
//
// The plan: every sweep writes OUT/.vrdmasim-plan, its fingerprint (a hash
// of the base configs' contents, the label and every point id) and the ids
// of all its points. `vrdmasim merge` reads the plan beside each input
// (in its directory, or the one above a `shards` directory) and refuses what
// does not add up (see merge_results).
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace vrdmasim {

class Config;
class ParamRegistry;

struct SweepOptions {
    std::string sweep_file;
    std::string out_dir;   // default chosen by the caller
    std::string executable;   // the vrdmasim binary to run for each point
    int jobs = 0;   // 0: number of cores
    int shard_index = 0;   // I of --shard I/N
    int shard_count = 1;   // N of --shard I/N
    bool progress = false;   // print done/total, elapsed, ETA on stderr ('\r' updates)
    // Whether a point's configuration has a variation source on (so that
    // its replications differ): given by the caller, who knows the models
    // (`[sweep] replications` is refused without it).
    std::function<bool(const Config&)> varies;
};

struct SweepPoint {
    int index = 0;
    std::string id;   // "p0003-1a2b3c4d"
    std::vector<std::pair<std::string, std::string>> assignment;   // swept key -> value
};

struct SweepPlan {
    std::string file;   // the sweep file, as given
    std::vector<std::string> base_configs;   // resolved paths
    std::string label;   // [sweep] label, "" if none
    std::vector<std::pair<std::string, std::string>> fixed;   // key -> value (non-list values), as written
    std::vector<std::string> swept_keys;   // in file order
    std::vector<SweepPoint> points;   // all points, all shards
    std::string fingerprint;   // 16 hex digits: bases' contents, label, point ids
    // [sweep] replications = N: each point of the other keys run with N
    // seeds, sim.seed the last swept key (base seed, base + 1, ...).
    int replications = 1;
    // Where each key's values come from ("FILE:LINE"), and the keys whose
    // values are paths (ParamDecl::path): relative to the sweep file's
    // directory, resolved so in point_arguments.
    std::map<std::string, std::string> origins;
    std::set<std::string> path_keys;
};

// The arguments of `vrdmasim run` for point `p` (after "run"): the base
// configs, then --section.key=value for every fixed and swept value (a
// path-valued one resolved against the sweep file's directory), then
// --origin=section.key=FILE:LINE for each, so that the point's messages and
// config.ini name the sweep file's line, not "command line" (a swept value's:
// "FILE:LINE, sweep point", a layer over the fixed ones: Config::layer).
std::vector<std::string> point_arguments(const SweepPlan& plan, const SweepPoint& p);

// The shard a process of a Slurm array or an MPI job runs when --shard is not
// given, from `env` (getenv): a Slurm array task from SLURM_ARRAY_TASK_ID
// with SLURM_ARRAY_TASK_MIN/MAX (and _STEP) or SLURM_ARRAY_TASK_COUNT; an MPI
// rank from OMPI_COMM_WORLD_RANK/SIZE (Open MPI) or PMI_RANK/PMI_SIZE (MPICH,
// Intel MPI). An MPI
// job inside an array task runs shard task * ranks + rank of tasks * ranks.
// `from` names the variables used ("" and 0/1 when none is set). Throws
// ConfigError naming the variable for a malformed or inconsistent value
// (an array whose ids are a list rather than a range included).
struct ShardFromEnv {
    int index = 0, count = 1;
    std::string from;
};
ShardFromEnv shard_from_environment(const std::function<const char*(const char*)>& env);

// The MPI rank of this process from the same variables (OMPI_COMM_WORLD_*,
// PMI_*) alone: count 1 and `from` "" when it is not one of several ranks.
ShardFromEnv mpi_rank_from_environment(const std::function<const char*(const char*)>& env);

// Parse and validate a sweep file against the registry: every key must be a
// declared parameter and every value (each listed one) must parse and be in
// range; base configs must exist and be valid. Throws ConfigError naming the
// file, line, key and value. "sweep.base" and "sweep.label" (one value, no
// commas) are the only keys allowed in [sweep].
//
// [sweep] replications = N (1 to 1000) runs every point with N seeds: it
// adds sim.seed as the last swept key. With N > 1 every point must have a
// variation source on (`varies`, see SweepOptions): a deterministic
// simulation gives the same figures for every seed, and a confidence
// interval of zero width would be a lie. Setting sim.seed too is refused.
SweepPlan plan_sweep(const ParamRegistry& reg, const std::string& sweep_file,
                     const std::function<bool(const Config&)>& varies = nullptr);

// With replications: one row per point of the other keys (aggregate.csv),
// each metric of the ok replications as its mean, `<metric>_sd` (sample
// standard deviation) and `<metric>_ci95` (half-width of the 95 %
// confidence interval of the mean, Student's t); `replications` and
// `replications_ok` count them. Returns the text of the CSV.
std::string aggregate_replications(const SweepPlan& plan, const std::vector<std::vector<std::string>>& results);

// Run the sweep. Returns the process exit status: 0 if every point of the
// shard is done and ok, 1 if any point failed or mismatched (others still
// ran), 2 for a bad sweep file or options (nothing run, nothing written).
int run_sweep(const ParamRegistry& reg, const SweepOptions& opts);

// Merge several results.csv files (shards of one sweep, or whole sweeps, as
// scripts/thesis.sh does) into one, written to `out`: columns are the union
// (first file's order, then new ones), rows sorted by point index (inputs'
// order among equal indexes). Each input's plan (OUT/.vrdmasim-plan beside it) says
// which sweep its rows belong to; per sweep, every point of its plan must be
// in exactly one input. Throws ConfigError for a missing or malformed input,
// an input without a plan, a row that is not a point of its input's plan, a
// point in two inputs (a shard given twice), or a sweep with points missing
// (named, with the shards that would hold them) unless `allow_partial`.
// Writes one line per sweep to `notes` (if given): its label, fingerprint,
// inputs and points, and with allow_partial what is missing.
void merge_results(const std::vector<std::string>& inputs, std::ostream& out, bool allow_partial = false,
                   std::ostream* notes = nullptr);

}   // namespace vrdmasim
