// The vrdmasim executable: run, params, sweep, merge, bench, bounds, run-batch.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <systemc>

#include "src/tools/bench.hpp"
#include "src/core/output_dir.hpp"
#include "src/core/params.hpp"
#include "src/tools/sweep.hpp"
#include "src/cli/bounds.hpp"
#include "src/cli/huge_pages.hpp"
#include "src/cli/run.hpp"
#include "src/sim/summary.hpp"
#include "src/sim/system.hpp"
#include "src/sim/timeseries.hpp"

namespace {

void usage(std::ostream& os) {
    os << "vrdmasim " << PROJECT_VERSION
       << " - cycle-approximate simulator of virtual-address RDMA on ExaNeSt QFDB clusters\n\n"
          "usage:\n"
          "  vrdmasim run [CONFIG.ini ...] [--section.key=value ...] [--out DIR] [--trace] [--log] [--quiet]\n"
          "      run one simulation (no config: the built-in default, two nodes of one QFDB,\n"
          "      node 0 streaming RDMA writes to node 1)\n"
          "  vrdmasim params [--markdown] [SECTION ...] | params --json\n"
          "      list the parameters of each SECTION (smmu, dma, ...) or of all: name, type, default\n"
          "      with unit, range, help (as Markdown tables: docs/parameters.md)\n"
          "  vrdmasim metrics [--markdown]\n"
          "      list the columns of summary.csv with unit and meaning (docs/metrics.md)\n"
          "  vrdmasim sweep SWEEP.ini [--jobs N] [--shard I/N] [--out DIR] | sweep SWEEP.ini --list-points\n"
          "      run the cartesian product of the listed values, one process per point (a Slurm\n"
          "      array task or an MPI rank runs its shard); or list the points\n"
          "  vrdmasim merge [--allow-partial] OUT.csv IN.csv [IN.csv ...]\n"
          "      merge the results.csv of sweep shards (or of whole sweeps) into one, checking that\n"
          "      every point of each sweep is there exactly once\n"
          "  vrdmasim bounds [CONFIG.ini ...] [--section.key=value ...] [--patterns LIST|all] [--channels]\n"
          "      the synthetic traffic's saturation-throughput bound (the most loaded channel under the\n"
          "      simulator's routes) and zero-load latency, per pattern; simulates nothing\n"
          "  vrdmasim run-batch RUNS.txt --logs DIR [--jobs N]\n"
          "      many small runs for a script: each line of RUNS.txt is one run's arguments (tabs between\n"
          "      them), run as a process forked from this one, its output in DIR/N.log; prints each\n"
          "      run's exit status as it ends\n"
          "  vrdmasim bench [--volume SIZE] | bench --scale [--max-nodes N] [--iterations N]\n"
          "      measure host cost: a stream's packets against a bare SystemC wait() loop, or a\n"
          "      halo on 4 to --max-nodes nodes (1296 by default, up to 16384)\n"
          "  vrdmasim --help | --version\n"
          "Each command takes --help. Options are spelled out in full (no abbreviations).\n\n"
          "Exit status: 0 success; 1 run failed (data mismatch, unfinished workload, simulation error, or a\n"
          "run invariant violated: its figures cannot be trusted); 2 bad command line or configuration\n"
          "(nothing simulated); 3 simulated to the end but transfers failed (a result, not a success).\n";
}

namespace po = boost::program_options;

// Every subcommand parses its options with Boost.Program_options, with no
// guessing of abbreviated names: "--output" is not "--out".
constexpr int kStrictStyle = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

const char* const kSweepUsage =
    "usage: vrdmasim sweep SWEEP.ini [--jobs N] [--shard I/N] [--out DIR]\n"
    "       vrdmasim sweep SWEEP.ini --list-points\n";
const char* const kMergeUsage = "usage: vrdmasim merge [--allow-partial] OUT.csv IN.csv [IN.csv ...]\n";

// A whole number written with decimal digits only (no sign, no spaces), at
// most max.
long parse_count(const std::string& v, const std::string& what, long max) {
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stol(v) > max)
        throw vrdmasim::ConfigError(what + " " + v + ": expected a whole number between 0 and " + std::to_string(max));
    return std::stol(v);
}

po::options_description sweep_options() {
    po::options_description opts("sweep options");
    opts.add_options()("help,h", "show this help")("jobs,j", po::value<std::string>()->value_name("N"),
                                                   "points run at once (default: the number of cores)")(
        "shard", po::value<std::string>()->value_name("I/N"),
        "run only the points whose index % N == I (0 <= I < N); without it, a Slurm array task "
        "(SLURM_ARRAY_TASK_ID with _MIN/_MAX or _COUNT) or an MPI rank (OMPI_COMM_WORLD_RANK/SIZE, "
        "PMI_RANK/SIZE) takes its shard from the environment, and shards may share one --out")(
        "list-points", "print the sweep's points (id and assignments, one per line) and their number, run nothing")(
        "out,o", po::value<std::string>()->value_name("DIR"),
        "output directory (default: vrdmasim-out/sweep-<sweep file name>); an existing one must be empty or an "
        "earlier sweep's (resume); one sweep, or the shards of one, at a time per directory");
    return opts;
}

// --shard I/N
void parse_shard(const std::string& v, vrdmasim::SweepOptions& o) {
    const auto slash = v.find('/');
    if (slash == std::string::npos) throw vrdmasim::ConfigError("--shard " + v + ": expected I/N");
    o.shard_index = static_cast<int>(parse_count(v.substr(0, slash), "--shard " + v + ": I", 100000));
    o.shard_count = static_cast<int>(parse_count(v.substr(slash + 1), "--shard " + v + ": N", 100000));
    if (o.shard_count < 1 || o.shard_index >= o.shard_count)
        throw vrdmasim::ConfigError("--shard " + v + ": expected I/N with 0 <= I < N");
}

// sweep --list-points: the points and their number, nothing run.
void list_points(const vrdmasim::ParamRegistry& reg, const vrdmasim::SweepOptions& o) {
    const vrdmasim::SweepPlan plan = vrdmasim::plan_sweep(reg, o.sweep_file, o.varies);
    for (const auto& p : plan.points) {
        std::cout << p.id;
        for (const auto& kv : p.assignment) std::cout << " " << kv.first << "=" << kv.second;
        std::cout << "\n";
    }
    std::cerr << "sweep: " << plan.points.size() << " point" << (plan.points.size() == 1 ? "" : "s") << " (plan "
              << plan.fingerprint << ")\n";
}

// Without --shard: a Slurm array task's or an MPI rank's shard, if any.
void shard_from_environment(vrdmasim::SweepOptions& o) {
    const vrdmasim::ShardFromEnv s = vrdmasim::shard_from_environment([](const char* n) { return std::getenv(n); });
    if (s.from.empty()) return;
    o.shard_index = s.index;
    o.shard_count = s.count;
    // One write: std::cerr is unbuffered, and the ranks of one mpirun share
    // its stderr (a line written in pieces comes out cut by another rank's).
    std::cerr << ("sweep: shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + " (from " + s.from +
                  ")\n");
}

// What the command line asks of a sweep. Returns -1 to run it, or the exit
// status (help or --list-points printed, or a bad command line reported).
int parse_sweep_command(const vrdmasim::ParamRegistry& reg, const std::vector<std::string>& args,
                        vrdmasim::SweepOptions& o) {
    const po::options_description opts = sweep_options();
    po::options_description hidden;
    hidden.add_options()("sweep-file", po::value<std::vector<std::string>>(), "");
    po::options_description all;
    all.add(opts).add(hidden);
    po::positional_options_description pos;
    pos.add("sweep-file", -1);
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(args).options(all).positional(pos).style(kStrictStyle).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << kSweepUsage << opts
                      << "See docs/running.md, 'Sweeps, replications and clusters', for the sweep file format.\n";
            return 0;
        }
        if (vm.count("jobs")) {
            o.jobs = static_cast<int>(parse_count(vm["jobs"].as<std::string>(), "--jobs", 100000));
            if (o.jobs < 1) throw vrdmasim::ConfigError("--jobs 0: expected a whole number >= 1");
        }
        if (vm.count("shard")) parse_shard(vm["shard"].as<std::string>(), o);
        if (vm.count("out")) {
            o.out_dir = vm["out"].as<std::string>();
            if (o.out_dir.empty()) throw vrdmasim::ConfigError("--out: the output directory name is empty");
        }
        const auto files =
            vm.count("sweep-file") ? vm["sweep-file"].as<std::vector<std::string>>() : std::vector<std::string>{};
        if (files.empty()) throw vrdmasim::ConfigError("sweep needs a sweep file");
        if (files.size() > 1)
            throw vrdmasim::ConfigError("only one sweep file may be given (got " + files[0] + " and " + files[1] + ")");
        o.sweep_file = files[0];
        if (vm.count("list-points")) {
            list_points(reg, o);
            return 0;
        }
        if (!vm.count("shard")) shard_from_environment(o);
    } catch (const vrdmasim::ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n" << kSweepUsage;
        return vrdmasim::kExitBadConfig;
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: sweep: " << vrdmasim::printable(e.what()) << "\n" << kSweepUsage;
        return vrdmasim::kExitBadConfig;
    }
    return -1;
}

int sweep_command(const vrdmasim::ParamRegistry& reg, const std::vector<std::string>& args) {
    vrdmasim::SweepOptions o;
    // Replications need a variation source (noise.*).
    o.varies = [](const vrdmasim::Config& c) { return vrdmasim::System::varies(c); };
    if (const int status = parse_sweep_command(reg, args, o); status >= 0) return status;
    if (o.out_dir.empty()) {
        std::string stem = o.sweep_file;
        const auto slash = stem.find_last_of('/');
        if (slash != std::string::npos) stem = stem.substr(slash + 1);
        const auto dot = stem.rfind('.');
        if (dot != std::string::npos) stem = stem.substr(0, dot);
        o.out_dir = "vrdmasim-out/sweep-" + stem;
    }
    o.executable = "/proc/self/exe";
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) o.executable.assign(buf, static_cast<std::size_t>(n));
    o.progress = isatty(STDERR_FILENO) != 0;
    return vrdmasim::run_sweep(reg, o);
}

// Why merge may not write `out_name` from `inputs`, "" if it may. Only a
// file this command wrote (its mark beside it, matching) is replaced:
// `merge a/results.csv b/results.csv` must not destroy a's. Nor a sweep's
// own results.csv, unless rebuilt from that sweep's own shards
// (scripts/slurm-sweep.sh's merge job): OUT/results.csv of a directory a
// sweep made, every input in OUT/shards/.
std::string merge_output_refusal(const std::string& out_name, const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(out_name, ec);
    if (fs::exists(st) && !fs::is_regular_file(st))
        return "the output " + out_name + " exists and is not a regular file";
    // The same file under another name ("./a.csv", a link) is still the same file.
    for (const auto& in : inputs) {
        std::error_code ec2;
        if (in == out_name || (fs::exists(st) && fs::equivalent(in, out_name, ec2) && !ec2))
            return "the output " + out_name + " is also an input (" + in + ")";
    }
    auto own_shards = [&]() {
        const fs::path dir = fs::path(out_name).parent_path();
        std::error_code e;
        if (fs::path(out_name).filename() != "results.csv" ||
            !fs::is_regular_file((dir.empty() ? fs::path(".") : dir) / vrdmasim::kSweepMarker, e))
            return false;
        const fs::path shards = fs::weakly_canonical(dir.empty() ? fs::path("shards") : dir / "shards", e);
        for (const auto& in : inputs)
            if (fs::weakly_canonical(fs::path(in), e).parent_path() != shards) return false;
        return true;
    };
    if (fs::exists(st) && !vrdmasim::is_merge_output(out_name) && !own_shards())
        return "the output " + out_name +
               " exists and is not an earlier vrdmasim merge output (merge marks what it writes, and this file "
               "has no mark or changed since); refusing to replace it: name a new file, or remove it yourself";
    return "";
}

int merge_command(const std::vector<std::string>& args) {
    po::options_description opts("merge options");
    opts.add_options()("help,h", "show this help")(
        "allow-partial", "merge even when points of a sweep are missing (listed on stderr) or an input has no plan");
    po::options_description all;
    all.add(opts).add_options()("file", po::value<std::vector<std::string>>(), "");
    po::positional_options_description pos;
    pos.add("file", -1);
    std::vector<std::string> files;
    bool allow_partial = false;
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(args).options(all).positional(pos).style(kStrictStyle).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << kMergeUsage
                      << "Merges the results.csv of sweep shards, or of whole sweeps, into OUT.csv; checks, by the\n"
                         "plan beside each input, that every point of each sweep is in exactly one input.\n"
                      << opts;
            return 0;
        }
        if (vm.count("file")) files = vm["file"].as<std::vector<std::string>>();
        allow_partial = vm.count("allow-partial") != 0;
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: merge: " << vrdmasim::printable(e.what()) << "\n" << kMergeUsage;
        return vrdmasim::kExitBadConfig;
    }
    if (files.size() < 2) {
        std::cerr << "vrdmasim: error: merge needs an output and at least one input\n" << kMergeUsage;
        return vrdmasim::kExitBadConfig;
    }
    const std::string& out_name = files[0];
    const std::vector<std::string> inputs(files.begin() + 1, files.end());
    if (const std::string refusal = merge_output_refusal(out_name, inputs); !refusal.empty()) {
        std::cerr << "vrdmasim: error: merge: " << refusal << "\n";
        return vrdmasim::kExitBadConfig;
    }
    std::ostringstream merged;
    try {
        vrdmasim::merge_results(inputs, merged, allow_partial, &std::cerr);
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return vrdmasim::kExitBadConfig;
    }
    std::string err = vrdmasim::write_file_atomically(out_name, merged.str());
    if (err.empty()) err = vrdmasim::write_merge_mark(out_name);
    if (!err.empty()) {
        std::cerr << "vrdmasim: error: merge: " << err << "\n";
        return vrdmasim::kExitFailed;
    }
    return 0;
}

// The width `params` wraps to: $COLUMNS when it is a number (as other
// command-line tools take it), else 80.
std::size_t terminal_width() {
    const char* c = std::getenv("COLUMNS");
    if (c && *c && std::strlen(c) <= 4 && std::strspn(c, "0123456789") == std::strlen(c)) {
        const long n = std::strtol(c, nullptr, 10);
        if (n > 0) return static_cast<std::size_t>(n);
    }
    return 80;
}

int params_command(const vrdmasim::ParamRegistry& reg, const std::vector<std::string>& args) {
    po::options_description opts("params options");
    opts.add_options()("help,h", "show this help")(
        "markdown", "print Markdown tables (the generated docs), of the SECTIONs given or of all")(
        "json",
        "print the whole schema as JSON (keys, types, defaults, canonical units, ranges, choices, help, "
        "whether the default is an estimate): for tools and scripts");
    po::options_description hidden;
    hidden.add_options()("section", po::value<std::vector<std::string>>(), "");
    po::options_description all;
    all.add(opts).add(hidden);
    po::positional_options_description pos;
    pos.add("section", -1);
    const char* usage_line = "usage: vrdmasim params [--markdown] [SECTION ...] | --json\n";
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).style(kStrictStyle).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << usage_line
                      << "Lists the parameters of each SECTION given (the part of a name before the dot:\n"
                         "`vrdmasim params smmu`), or of all: name, type, default with unit, range, and\n"
                         "the help below, wrapped to $COLUMNS (80 if unset).\n"
                      << opts;
            return 0;
        }
        if (vm.count("json") && vm.count("markdown"))
            throw po::error("--json and --markdown are two formats: one of them");
        if (vm.count("section") && vm.count("json"))
            throw po::error("--json prints the whole schema: no SECTION with it");
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: params: " << vrdmasim::printable(e.what()) << "\n" << usage_line;
        return vrdmasim::kExitBadConfig;
    }
    if (vm.count("json")) {
        reg.print_json(std::cout, vrdmasim::workload_trials_json());
        return 0;
    }
    const std::vector<std::string> sections =
        vm.count("section") ? vm["section"].as<std::vector<std::string>>() : std::vector<std::string>{};
    try {
        if (vm.count("markdown")) reg.print_markdown(std::cout, sections);
        else reg.print(std::cout, terminal_width(), sections);
    } catch (const vrdmasim::ConfigError& e) {
        std::cerr << "vrdmasim: error: params: " << e.what() << "\n" << usage_line;
        return vrdmasim::kExitBadConfig;
    }
    return 0;
}

int metrics_command(const std::vector<std::string>& args) {
    po::options_description opts("metrics options");
    opts.add_options()("help,h", "show this help")("markdown", "print the Markdown table (docs/metrics.md)");
    const char* usage_line = "usage: vrdmasim metrics [--markdown]\n";
    po::variables_map vm;
    try {
        const po::positional_options_description none;
        po::store(po::command_line_parser(args).options(opts).positional(none).style(kStrictStyle).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: metrics: " << vrdmasim::printable(e.what()) << "\n" << usage_line;
        return vrdmasim::kExitBadConfig;
    }
    if (vm.count("help")) {
        std::cout << usage_line << "Lists every summary.csv column: name, unit, meaning.\n" << opts;
        return 0;
    }
    if (vm.count("markdown")) {
        vrdmasim::summary_metrics().write_markdown(std::cout);
        std::cout
            << "\n## Time series (timeseries.csv)\n\n"
               "`vrdmasim run --sample-interval TIME` also writes `timeseries.csv`: one row every TIME of "
               "simulated time and one when every workload has finished (or where a failed run stopped), with these columns (`scripts/plot.py RUN_DIR METRIC` plots "
               "them against `time_us`; `--report` draws them). A row at time t counts what the models did "
               "by t, give or take `sim.quantum` (processes run up to it ahead), which is why TIME must be at "
               "least the quantum. Sampling changes no other output of the run.\n\n"
               "| column | unit | meaning |\n|---|---|---|\n";
        for (const auto& c : vrdmasim::TimeSeries::columns())
            std::cout << "| `" << c.name << "` | " << c.unit << " | " << c.meaning << " |\n";
        std::cout
            << "\n## Region of interest\n\n"
               "A warm-up can be left out of the figures, or one part of a run studied alone (gem5's warm-up and "
               "statistics reset): `roi.warmup-transfers = N` begins the region when the workload's N-th transfer "
               "finishes (every job's count), `roi.transfers = M` ends it when M more have (0: at the run's end). "
               "A stream whose 16 buffers are reused has a cold first pass (every page faults) and warm ones: "
               "`--roi.warmup-transfers=16` leaves the cold pass out, `--roi.transfers=16` studies it alone.\n\n"
               "With a region, `summary.csv` (and a sweep's `results.csv`) describe the region alone: "
               "`region_start_us` and `region_end_us` say where it lies, latencies are its transfers', counters "
               "what happened in it, energy over its time. A transfer is in the region when it finishes after "
               "the region begins and no later than it ends, by its simulated time (however far ahead the "
               "process that saw it ran), so `roi.transfers = M` gives M transfers unless several finish at the "
               "same instant as an end. Throughput is what came in inside the region over its span: the payload "
               "the engines of job 0's processes accepted, each packet's by the time it crossed the link into "
               "its engine (`*.dma.payload_in_pd1`), and the bytes of its CPU copies (`workload.local_payload_in`). "
               "So a transfer that straddles an end counts only for its part inside, no region can show more "
               "than the links carried, and it includes what the wire carried for the job beyond its transfers' "
               "own bytes (messaging headers, a collective's intermediate steps); a region that spans no time "
               "has no throughput (an empty cell, and a warning). "
               "`whole-run-summary.csv` is the whole run's summary, `roi-stats.json` the region's statistics; "
               "`stats.json` keeps the whole run's, and the run's self-checks run on them, with the region's own "
               "(`region-span`, `region-within-run`, `region-link-utilisation`, `region-throughput-ceiling`, "
               "`region-energy`). Marking a region changes nothing in the run itself: `whole-run-summary.csv` is "
               "the `summary.csv` of the same run without one.\n\n"
               "A counter's or a time sum's value over the region is its growth there, and a distribution holds "
               "exactly the samples taken in it (a count or a sample that a model makes ahead of the kernel, "
               "such as a transfer's completion or a packet's arrival at a router, is held until the kernel "
               "reaches its time and added in the order of the times, ties in the order made, so that no figure "
               "depends on how many were held at once). A peak, a gauge or a ratio a workload computes at its end has "
               "no value over a part of the run: its column is empty and its statistic `null` in "
               "`roi-stats.json` (`pinned_peak_bytes`, `overlap_fraction`, `lock_fairness`, ...); so are "
               "`post_window_throughput_gbps` and `setup_us`, which a region does not have. The region's ends "
               "are the completions' simulated times; its statistics are read when the simulation reaches them, "
               "so, like a time-series sample, those other than the transfers' own figures and the throughput "
               "may include what processes running ahead did up to `sim.quantum` past an end. A region the run cannot reach is refused (exit 2) when the workload "
               "knows how many transfers it will finish, and otherwise fails the run (exit 1, no summary).\n";
        return 0;
    }
    for (const auto& m : vrdmasim::summary_metrics().all())
        std::cout << m.name << " [" << (m.unit.empty() ? "count" : m.unit) << "]\n    " << m.description << "\n";
    return 0;
}

const char* const kRunBatchUsage = "usage: vrdmasim run-batch RUNS.txt --logs DIR [--jobs N]\n";

// run-batch: many small runs for a script (scripts/composition.py makes
// thousands), each as the process `vrdmasim run ARGS...` would be, without
// that process's start: loading and relocating the executable's libraries
// and their static initialisation (most of a small run's host time), and
// the declaration of the parameters. Each line of RUNS.txt is one run's
// ARGS, separated by tabs (an empty line is a run with none). Each runs in
// a process forked from this one, which has done nothing else yet but
// declare the parameters (g_declared, as each child's own declaration
// would have left them); the child enters SystemC's main as a new process
// does (sc_elab_and_sim, then sc_main with argv = this executable, "run",
// ARGS...), with stdout and stderr in DIR/<line number, from 0>.log, and
// its exit status is the run's. --jobs runs at once (default 1). As each
// run ends this prints "<line number> exit <status>" or "<line number>
// signal <number>", one line, flushed. Exit status 0 whatever the runs' (2:
// a bad command line or RUNS.txt unreadable, nothing run).
// RUNS.txt's lines, each a run's ARGS (separated by tabs).
std::vector<std::vector<std::string>> read_runs(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw vrdmasim::ConfigError("cannot read " + file);
    std::vector<std::vector<std::string>> runs;
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> words;
        std::size_t at = 0;
        while (!line.empty()) {
            const std::size_t tab = line.find('\t', at);
            words.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
            if (tab == std::string::npos) break;
            at = tab + 1;
        }
        runs.push_back(std::move(words));
    }
    return runs;
}

// In the forked child: run `words` (its log the run's stdout and stderr)
// as a new process of `vrdmasim run` would; never returns.
[[noreturn]] void run_batch_child(const std::string& log, std::vector<std::string> words) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        std::cerr << "vrdmasim: error: run-batch: cannot write " << log << ": " << std::strerror(errno) << "\n";
        std::_Exit(vrdmasim::kExitFailed);
    }
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    std::vector<char*> child_argv;
    for (auto& w : words) child_argv.push_back(w.data());
    child_argv.push_back(nullptr);
    // What libsystemc's main() does with a new process's arguments.
    std::exit(sc_core::sc_elab_and_sim(static_cast<int>(words.size()), child_argv.data()));
}

// The parameters as declared by run-batch before its children fork: each
// child's sc_main finds them declared, as its own declare_all_params would
// have left them (the declarations depend on nothing of the run: a fifth
// of a small run's instructions, callgrind 2026-11-29); null otherwise.
const vrdmasim::ParamRegistry* g_declared = nullptr;

// Runs `runs`, `jobs` at a time, each in a forked child; prints each one's
// end as it comes. 0, or kExitFailed if fork or waitpid failed.
int run_batch_runs(const std::vector<std::vector<std::string>>& runs, const std::string& logs, long jobs,
                   const char* argv0) {
    vrdmasim::ParamRegistry declared;
    vrdmasim::declare_all_params(declared);
    g_declared = &declared;
    std::map<pid_t, std::size_t> running;
    std::size_t next = 0;
    while (next < runs.size() || !running.empty()) {
        while (running.size() < static_cast<std::size_t>(jobs) && next < runs.size()) {
            // Nothing buffered here may reach a child's output.
            std::cout.flush();
            std::fflush(nullptr);
            const pid_t pid = fork();
            if (pid < 0) {
                std::cerr << "vrdmasim: error: run-batch: fork: " << std::strerror(errno) << "\n";
                break;
            }
            if (pid == 0) {
                std::vector<std::string> words{argv0, "run"};
                words.insert(words.end(), runs[next].begin(), runs[next].end());
                run_batch_child(logs + "/" + std::to_string(next) + ".log", std::move(words));
            }
            running[pid] = next++;
        }
        if (running.empty()) return vrdmasim::kExitFailed;   // fork failed with nothing left to wait for
        int status = 0;
        const pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            std::cerr << "vrdmasim: error: run-batch: waitpid: " << std::strerror(errno) << "\n";
            return vrdmasim::kExitFailed;
        }
        const auto it = running.find(pid);
        if (it == running.end()) continue;
        if (WIFSIGNALED(status)) std::cout << it->second << " signal " << WTERMSIG(status) << std::endl;
        else std::cout << it->second << " exit " << WEXITSTATUS(status) << std::endl;
        running.erase(it);
    }
    return 0;
}

int run_batch_command(const std::vector<std::string>& args, const char* argv0) {
    po::options_description opts("run-batch options");
    opts.add_options()("help,h", "show this help")("jobs,j", po::value<std::string>()->value_name("N"),
                                                   "runs at once (default 1)")(
        "logs", po::value<std::string>()->value_name("DIR"), "where each run's stdout and stderr go: DIR/N.log");
    po::options_description all;
    all.add(opts).add_options()("runs", po::value<std::vector<std::string>>(), "");
    po::positional_options_description pos;
    pos.add("runs", -1);
    std::vector<std::vector<std::string>> runs;
    std::string logs;
    long jobs = 1;
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(args).options(all).positional(pos).style(kStrictStyle).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << kRunBatchUsage
                      << "Runs `vrdmasim run ARGS...` for each line of RUNS.txt (ARGS separated by tabs), each in\n"
                         "a process of its own forked from this one; prints \"N exit S\" or \"N signal K\" as\n"
                         "run N (from 0) ends.\n"
                      << opts;
            return 0;
        }
        if (vm.count("jobs")) {
            jobs = parse_count(vm["jobs"].as<std::string>(), "--jobs", 1000);
            if (jobs < 1) throw vrdmasim::ConfigError("--jobs 0: expected a whole number >= 1");
        }
        if (!vm.count("logs") || vm["logs"].as<std::string>().empty())
            throw vrdmasim::ConfigError("run-batch needs --logs DIR");
        logs = vm["logs"].as<std::string>();
        const auto files = vm.count("runs") ? vm["runs"].as<std::vector<std::string>>() : std::vector<std::string>{};
        if (files.size() != 1) throw vrdmasim::ConfigError("run-batch needs one RUNS.txt");
        runs = read_runs(files[0]);
    } catch (const vrdmasim::ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n" << kRunBatchUsage;
        return vrdmasim::kExitBadConfig;
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: run-batch: " << vrdmasim::printable(e.what()) << "\n" << kRunBatchUsage;
        return vrdmasim::kExitBadConfig;
    }
    return run_batch_runs(runs, logs, jobs, argv0);
}

}   // namespace

int sc_main(int argc, char* argv[]) {
    // Before the system's objects: the heap in huge pages (huge_pages.hpp).
    vrdmasim::install_huge_page_heap();
    // stderr line-buffered: each message leaves in one write(), so the
    // lines of processes that share one stderr (the ranks of an mpirun, the
    // tasks of a Slurm array) never interleave mid-line, as they did when
    // every `<<` of unbuffered std::cerr was its own write.
    std::setvbuf(stderr, nullptr, _IOLBF, BUFSIZ);
    // A file-size limit (ulimit -f) makes a write fail with EFBIG, which
    // every output reports ("cannot write ...: File too large", exit 1),
    // instead of killing the run by SIGXFSZ with no word.
    std::signal(SIGXFSZ, SIG_IGN);
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        usage(std::cerr);
        return vrdmasim::kExitBadConfig;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        usage(std::cout);
        return 0;
    }
    if (cmd == "--version" || cmd == "-V" || cmd == "version") {
        std::cout << "vrdmasim " << PROJECT_VERSION << " (SystemC " << sc_core::sc_release() << ")\n";
        return 0;
    }
    // Before anything else of a command: its children start from here.
    if (cmd == "run-batch") return run_batch_command(args, argv[0]);
    vrdmasim::ParamRegistry own;
    if (g_declared == nullptr) vrdmasim::declare_all_params(own);
    const vrdmasim::ParamRegistry& reg = g_declared ? *g_declared : own;
    if (cmd == "run") return vrdmasim::run_command(reg, args);
    if (cmd == "params") return params_command(reg, args);
    if (cmd == "metrics") return metrics_command(args);
    if (cmd == "sweep") return sweep_command(reg, args);
    if (cmd == "merge") return merge_command(args);
    if (cmd == "bounds") return vrdmasim::bounds_command(reg, args);
    if (cmd == "bench") return vrdmasim::bench_command(args);
    if (cmd == "bench-bare") return vrdmasim::bench_bare_command(args);
    if (cmd == "bench-smmu") return vrdmasim::bench_smmu_command(args);
    if (cmd == "bench-kernel") return vrdmasim::bench_kernel_child_command(args);
    std::cerr << "vrdmasim: error: unknown command '" << cmd << "'\n\n";
    usage(std::cerr);
    return vrdmasim::kExitBadConfig;
}

// SystemC prints a banner on first use unless told not to.
namespace {
struct QuietBanner {
    QuietBanner() { setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); }
} quiet_banner;
}   // namespace
