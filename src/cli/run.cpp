#include "src/cli/run.hpp"
#include "src/core/child_processes.hpp"
#include "src/core/failure_causes.hpp"

#if VRDMASIM_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

#include <algorithm>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <set>
#include <sstream>

#include <boost/program_options.hpp>

#include "src/core/csv.hpp"
#include "src/cli/mpi_comm.hpp"
#include "src/core/output_dir.hpp"
#include "src/sim/invariants.hpp"
#include "src/sim/physical_engine.hpp"
#include "src/sim/progress.hpp"
#include "src/sim/thread_stacks.hpp"
#include "src/tools/report.hpp"
#include "src/tools/sweep.hpp"
#include "src/sim/roi.hpp"
#include "src/sim/summary.hpp"
#include "src/sim/timeseries.hpp"
#include "src/sim/parallel/rank_parties.hpp"
#include "src/sim/parallel/windows.hpp"
#include "src/sim/parallel/trace_gather.hpp"
#include "src/sim/system.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace vrdmasim {

namespace {

std::string default_out_dir() {
    std::time_t t = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "vrdmasim-out/run-%Y%m%d-%H%M%S", std::localtime(&t));
    std::string base = buf, dir = base;
    for (int i = 2; fs::exists(dir); ++i) dir = base + "-" + std::to_string(i);
    return dir;
}

// An existing output directory may be replaced only if it is empty or is
// provably an earlier run's output: the run marker, and nothing but the
// files a run writes.
void check_out_dir(const std::string& out) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(out, ec);
    if (!fs::exists(st)) return;
    // A symbolic link to a directory names that directory (OutputStaging).
    if (!fs::is_directory(fs::is_symlink(st) ? fs::status(out, ec) : st))
        throw ConfigError("--out " + out + ": exists and is not a directory; refusing to replace it");
    if (fs::is_empty(out, ec) || is_run_output(out)) return;
    throw ConfigError("--out " + out + ": directory exists and is not an earlier vrdmasim run's output (no " +
                      kRunMarker + " marker, or files a run does not write); refusing to replace it");
}

using Summary = std::vector<std::pair<std::string, std::string>>;

// What the models and libraries say of why transfers failed
// (src/core/failure_causes.hpp): ": ..." or where to look.
std::string transfer_error_causes(const Config& cfg, const StatRegistry& stats) {
    const std::vector<std::string> why = failure_causes::explain(cfg, stats);
    if (why.empty()) return "  (see stats.txt: *.dma.transfers_failed, *.dma.rx_errors)";
    std::string s = ": ";
    for (std::size_t i = 0; i < why.size(); ++i) s += (i ? "; " : "") + why[i];
    return s;
}

// Steps of the models' stories the report's timeline keeps (Tracer::keep_story).
constexpr std::size_t kReportStorySteps = 2000;

// The command line as a shell would take it back: "vrdmasim run a.ini --out 'my dir'".
std::string command_line(const std::vector<std::string>& args) {
    std::string s = "vrdmasim run";
    for (const auto& a : args) {
        s += ' ';
        if (!a.empty() &&
            a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                std::string::npos) {
            s += a;
        } else {
            s += '\'';
            for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
            s += '\'';
        }
    }
    return s;
}

// A trace or log this big gets a warning while the run simulates (and
// again at each factor of 4; --trace-warn-size): files this size take many
// seconds to write at the end and more to open in a viewer.
constexpr std::uint64_t kBigOutputBytes = std::uint64_t(256) << 20;

// 1.5 KiB, 12.3 MiB, 1.2 GiB.
std::string size_text(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    std::ostringstream os;
    os << std::fixed << std::setprecision(u == 0 ? 0 : 1) << bytes << " " << units[u];
    return os.str();
}

// A time for a message: to the microsecond past a millisecond, to the
// millisecond past a second (285.204ms, 1.276s).
std::int64_t rounded_ps(sc_core::sc_time t) {
    const std::int64_t ps = std::llround(t.to_seconds() * 1e12);
    const std::int64_t unit = ps >= 1000000000000 ? 1000000000 : ps >= 1000000000 ? 1000000 : 1000;
    return (ps + unit / 2) / unit * unit;
}

// "trace.json has reached 256 MiB ...": what it is likely to come to, from
// the transfers done of those planned (when every workload knows), and how
// to record less.
void warn_output_size(std::ostream& os, const std::string& file, std::uint64_t bytes, System& sys, bool progress) {
    std::uint64_t done = 0, total = 0;
    bool known = true;
    for (const auto& w : sys.workloads()) {
        done += w->log().transfers.value();
        const std::uint64_t planned = w->planned_transfers();
        known = known && planned > 0;
        total += planned;
    }
    if (progress) os << "\r\033[K";   // over the progress line, redrawn after
    os << "vrdmasim: warning: " << file << " has reached " << size_text(double(bytes))
       << (file == "trace.json.gz" ? " of JSON before compression" : "") << " at "
       << format_time_ps(rounded_ps(sc_core::sc_time_stamp())) << " of simulated time";
    if (known && total > 0) {
        // A partitioned run's rank 0 records and counts its own nodes'
        // only: its bytes per transfer, scaled to every rank's transfers.
        os << ", " << done << (sys.partition().split() ? " transfers done on this rank's nodes, of " : " of ") << total
           << (sys.partition().split() ? " in all" : " transfers done");
        if (done > 0 && done < total)
            os << ": at this rate about " << size_text(double(bytes) * double(total) / double(done)) << " in all";
    }
    os << "; it is written when the run ends (a second or more per 100 MiB). --trace-window FROM,TO or "
          "--trace-filter/--log-filter NODE,MODEL record less, --trace-gzip compresses it (docs/trace.md)\n";
}

void print_usage(std::ostream& os) {
    os << "usage: vrdmasim run [CONFIG.ini ...] [--section.key=value ...] [--out DIR] [--trace] [--log] [--quiet] [--all]"
          " [--no-progress] [--report] [--trace-window FROM,TO] [--trace-filter NODE,MODEL] [--trace-gzip]\n";
}

// The simulation itself, to sim.time-limit or until no event is left. On a
// terminal, with a progress line (src/sim/progress.hpp): sliced, so that the
// line can be drawn between slices, to the same events in the same order.
void simulate(System& sys, bool progress) {
    if (!progress) {
        sc_core::sc_start(sys.time_limit(), sc_core::SC_EXIT_ON_STARVATION);
        return;
    }
    auto counts = [&sys]() {
        RunProgress::Counts c;
        bool known = true;
        for (const auto& w : sys.workloads()) {
            c.done += w->log().transfers.value();
            const std::uint64_t planned = w->planned_transfers();
            known = known && planned > 0;
            c.total += planned;
        }
        if (!known) c.total = 0;
        return c;
    };
    RunProgress(std::cerr, counts, sys.time_limit()).simulate();
}

}   // namespace

// --log-filter's and --trace-filter's terms: node or model names,
// comma-separated, none empty (Tracer's NameFilter matches them).
std::vector<std::string> parse_filter_terms(const std::string& option, const std::string& text) {
    std::vector<std::string> terms;
    std::stringstream ss(text);
    for (std::string t; std::getline(ss, t, ',');) {
        if (t.empty() || t.find_first_of(" .\t") != std::string::npos)
            throw ConfigError(option + ": '" + text + "': give node and model names separated by commas (node1,smmu)");
        terms.push_back(t);
    }
    if (terms.empty()) throw ConfigError(option + ": no node or model named");
    return terms;
}

// --trace-window FROM,TO: simulated times with units (as sim.time-limit);
// FROM left out is 0, TO left out the end of the run. In picoseconds.
std::pair<std::int64_t, std::int64_t> parse_trace_window(const std::string& text) {
    const std::string usage = "--trace-window '" + text +
                              "': give FROM,TO in simulated time with units (100us,200us; 5ms, for 5 ms to the end)";
    const auto comma = text.find(',');
    if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) throw ConfigError(usage);
    auto blank = [](const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; };
    const std::string from_text = text.substr(0, comma), to_text = text.substr(comma + 1);
    if (blank(from_text) && blank(to_text)) throw ConfigError(usage);
    std::int64_t from = 0, to = std::numeric_limits<std::int64_t>::max();
    try {
        if (!blank(from_text)) from = parse_time_ps(from_text);
    } catch (const std::invalid_argument& e) {
        throw ConfigError(usage + ": FROM '" + from_text + "': " + e.what());
    }
    try {
        if (!blank(to_text)) to = parse_time_ps(to_text);
    } catch (const std::invalid_argument& e) {
        throw ConfigError(usage + ": TO '" + to_text + "': " + e.what());
    }
    if (to <= from) throw ConfigError(usage + ": TO must be later than FROM");
    return {from, to};
}

namespace {
// The System of the run, kept (not destroyed) until the process exits: see
// run_command. A plain pointer: nothing at exit frees or forgets it.
System* g_system_kept_to_exit = nullptr;
}   // namespace

namespace {

// What the command line asks of a run, besides its configuration.
struct RunOptions {
    std::string out;
    bool trace = false, narrate = false, quiet = false, progress = false, report = false, all = false;
    bool check = false;   // --check: build the system, simulate nothing, write nothing
    std::int64_t sample_ps = 0;   // --sample-interval, 0: no time series
    std::vector<std::string> log_filter, trace_filter;
    bool trace_gzip = false;
    std::uint64_t trace_warn_bytes = kBigOutputBytes;
    std::pair<std::int64_t, std::int64_t> trace_window{0, std::numeric_limits<std::int64_t>::max()};
};

po::options_description run_options() {
    po::options_description opts("run options");
    opts.add_options()("help,h", "show this help")(
        "out,o", po::value<std::string>(),
        "output directory (default: vrdmasim-out/run-DATE-TIME); an existing one is replaced only if "
        "empty or an earlier run's output (it holds .vrdmasim-run and nothing but a run's files)")(
        "trace", "write trace.json (Chrome/Perfetto trace events)")(
        "trace-gzip",
        "with --trace: write trace.json.gz instead, gzip-compressed (Perfetto and the DevTools "
        "Performance panel open it as it is)")(
        "trace-window", po::value<std::string>()->value_name("FROM,TO"),
        "with --trace or --log: record only what happens between these simulated times (100us,200us; 5ms, "
        "from 5 ms to the end): slices that overlap the window, instants, arrows and log lines within it")(
        "trace-filter", po::value<std::string>(),
        "with --trace: keep only the tracks of these nodes and models, "
        "comma-separated, as --log-filter (--trace-filter node1,dma: node 1's engine)")(
        "trace-warn-size", po::value<std::string>()->value_name("SIZE"),
        "warn on stderr while the run simulates when trace.json or events.log reaches SIZE, and at each 4 times "
        "more, with the size to expect (default 256MiB; 0: never)")("log", "write events.log (narrated timeline)")(
        "log-filter", po::value<std::string>(),
        "with --log: keep only the lines of these nodes and models, "
        "comma-separated (--log-filter node1,smmu: node 1's SMMU and SMMU driver)")(
        "report",
        "write report.html: one self-contained page (open it in a browser) with the verdict, the summary, "
        "the parameters that differ from the defaults, plots of the key distributions and a timeline of the first "
        "faults the models noted; a failed run's report says so at the top")(
        "sample-interval", po::value<std::string>()->value_name("TIME"),
        "write timeseries.csv: throughput, faults, swap, free memory and link utilisation every TIME of simulated "
        "time and at the end (at least sim.quantum; e.g. 100us); drawn in report.html")("quiet,q",
                                                                                        "print nothing but errors")(
        "all",
        "print every figure of the summary, those at 0 or without a value too (by default: the headline "
        "and the figures this run has; summary.csv always has every one)")(
        "no-progress",
        "no progress line on stderr (shown only when stderr is a terminal and the run takes over a "
        "second of host time)")(
        "check",
        "check the configuration: build the system (every refusal a run would make before simulating, exit 2), "
        "simulate nothing, write nothing; prints the planned work (what a sweep checks each point with)")(
        "origin", po::value<std::vector<std::string>>()->composing()->value_name("KEY=WHERE"),
        "say where the value of the parameter KEY given on this command line came from (messages and config.ini "
        "name WHERE instead of 'command line'; a sweep gives its points the sweep file's line)")(
        "config", po::value<std::vector<std::string>>(), "config files, applied in order");
    return opts;
}

// "--section.key value" is the same as "--section.key=value" for declared
// parameters (otherwise the value would be taken for a config file).
std::vector<std::string> join_parameter_values(const ParamRegistry& reg, const std::vector<std::string>& args) {
    std::vector<std::string> joined;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() > 2 && a.compare(0, 2, "--") == 0 && a.find('=') == std::string::npos && reg.find(a.substr(2)) &&
            i + 1 < args.size() && args[i + 1].compare(0, 1, "-") != 0) {
            joined.push_back(a + "=" + args[++i]);
        } else {
            joined.push_back(a);
        }
    }
    return joined;
}

// --sample-interval's time in ps; at least sim.quantum.
std::int64_t parse_sample_interval(const std::string& text, const Config& cfg) {
    std::int64_t ps = 0;
    try {
        ps = parse_time_ps(text);
    } catch (const std::invalid_argument& e) {
        throw ConfigError("--sample-interval " + text + ": " + e.what());
    }
    // A sample reads statistics that processes running ahead (up to
    // sim.quantum) have already moved: a shorter interval would draw that
    // jitter, not the system.
    const std::int64_t quantum = cfg.ps(params_of<SimParams>().quantum);
    if (ps < quantum || ps <= 0)
        throw ConfigError("--sample-interval " + text +
                          ": shorter than sim.quantum = " + cfg.text(params_of<SimParams>().quantum) +
                          " (a sample can only be trusted to within the quantum: processes run up to it "
                          "ahead of the sampler)");
    return ps;
}

// --log-filter, --trace-filter, --trace-gzip, --trace-warn-size, --trace-window.
void parse_trace_options(const po::variables_map& vm, RunOptions& o) {
    if (vm.count("log-filter")) {
        if (!o.narrate) throw ConfigError("--log-filter needs --log (it filters the narrated log)");
        o.log_filter = parse_filter_terms("--log-filter", vm["log-filter"].as<std::string>());
    }
    if (vm.count("trace-filter")) {
        if (!o.trace) throw ConfigError("--trace-filter needs --trace (it filters the trace's tracks)");
        o.trace_filter = parse_filter_terms("--trace-filter", vm["trace-filter"].as<std::string>());
    }
    o.trace_gzip = vm.count("trace-gzip") > 0;
    if (o.trace_gzip && !o.trace) throw ConfigError("--trace-gzip needs --trace");
    if (vm.count("trace-warn-size")) {
        const std::string text = vm["trace-warn-size"].as<std::string>();
        try {
            o.trace_warn_bytes = parse_size_bytes(text);
        } catch (const std::invalid_argument& e) {
            throw ConfigError("--trace-warn-size " + text + ": " + e.what());
        }
    }
    if (vm.count("trace-window")) {
        if (!o.trace && !o.narrate)
            throw ConfigError("--trace-window needs --trace or --log (it bounds what they record)");
        o.trace_window = parse_trace_window(vm["trace-window"].as<std::string>());
    }
}

void print_help(const po::options_description& opts) {
    print_usage(std::cout);
    std::cout << opts << "\nEvery parameter is also an option: see `vrdmasim params`.\n"
              << "Exit status: 0 success; 1 failed (data mismatch, unfinished workload, simulation error, or a\n"
                 "violated self-check: its figures cannot be trusted); 2 bad command line or configuration;\n"
                 "3 simulated to the end, but transfers failed.\n";
}

// The command line into `cfg` and `o`. Returns -1 to go on, or the exit
// status (help printed, or a bad command line or configuration reported).
int parse_run_command(const ParamRegistry& reg, const std::vector<std::string>& args, Config& cfg, RunOptions& o) {
    const po::options_description opts = run_options();
    po::positional_options_description pos;
    pos.add("config", -1);
    try {
        po::parsed_options parsed =
            po::command_line_parser(join_parameter_values(reg, args))
                .options(opts)
                .positional(pos)
                .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                .allow_unregistered()
                .run();
        po::variables_map vm;
        po::store(parsed, vm);
        po::notify(vm);
        if (vm.count("help")) {
            print_help(opts);
            return kExitOk;
        }
        if (vm.count("config"))
            for (const auto& f : vm["config"].as<std::vector<std::string>>()) cfg.apply_file(f);
        std::map<std::string, std::string> origins;
        if (vm.count("origin"))
            for (const auto& a : vm["origin"].as<std::vector<std::string>>()) {
                const auto eq = a.find('=');
                if (eq == std::string::npos || eq == 0 || eq + 1 == a.size() || !reg.find(a.substr(0, eq)))
                    throw ConfigError("--origin " + clip_for_message(a) +
                                      ": expected KEY=WHERE, KEY a parameter (section.key)");
                origins[a.substr(0, eq)] = a.substr(eq + 1);
            }
        cfg.apply_command_line(po::collect_unrecognized(parsed.options, po::exclude_positional), origins);
        System::resolve(cfg);
        o.out = vm.count("out") ? vm["out"].as<std::string>() : default_out_dir();
        if (o.out.empty()) throw ConfigError("--out: the output directory name is empty");
        o.trace = vm.count("trace") > 0;
        o.narrate = vm.count("log") > 0;
        o.report = vm.count("report") > 0;
        parse_trace_options(vm, o);
        o.quiet = vm.count("quiet") > 0;
        o.all = vm.count("all") > 0;
        if (vm.count("sample-interval"))
            o.sample_ps = parse_sample_interval(vm["sample-interval"].as<std::string>(), cfg);
        o.progress = RunProgress::wanted(vm.count("no-progress") > 0, o.quiet);
        o.check = vm.count("check") > 0;
        if (!o.check) check_out_dir(o.out);
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return kExitBadConfig;
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: " << printable(e.what()) << "\n";
        print_usage(std::cerr);
        return kExitBadConfig;
    }
    return -1;
}

// Everything is written into a fresh directory beside the target and
// renamed into place at the end: no half-written output. The output path
// is claimed when the staging starts, not only checked: a directory made at
// it, or a file put into it, while the run simulates is never deleted.
class OutputStaging {
public:
    explicit OutputStaging(const std::string& out) : out_(out) {
        // "DIR/" names DIR: without the trailing separator, the temporary
        // directory below lands beside DIR, not inside it.
        target_ = fs::absolute(out).lexically_normal();
        if (target_.filename().empty()) target_ = target_.parent_path();
        // A symbolic link to a directory names that directory: the outputs
        // are staged beside it and renamed to it, the link left as it is.
        std::error_code ec;
        if (fs::is_symlink(fs::symlink_status(target_, ec)) && fs::is_directory(fs::status(target_, ec)))
            if (const fs::path real = fs::canonical(target_, ec); !ec) target_ = real;
        tmp_ = target_.parent_path() / ("." + target_.filename().string() + ".partial-" + std::to_string(getpid()));
    }
    // Creates and claims; returns the exit status on failure (reported), -1 on success.
    int start() {
        std::error_code ec;
        fs::create_directories(target_.parent_path(), ec);
        remove_stale_partials(target_.parent_path());   // left by killed runs
        fs::remove_all(tmp_, ec);
        if (!fs::create_directory(tmp_, ec)) {
            std::cerr << "vrdmasim: error: cannot create output directory " << tmp_ << ": " << ec.message() << "\n";
            // A path that cannot be used is the configuration's; a disk
            // that cannot take a directory is a failed write (exit 1).
            const int e = ec.value();
            return e == ENOSPC || e == EDQUOT || e == EIO ? kExitFailed : kExitBadConfig;
        }
        try {
            const std::string claim = claim_run_output(target_);
            if (!claim.empty()) {
                std::cerr << "vrdmasim: error: --out " << out_ << ": " << claim << "\n";
                fs::remove_all(tmp_, ec);
                return kExitBadConfig;
            }
            // First, so that a killed run's leftover is recognisably ours.
            write_marker(tmp_, kRunMarker, "vrdmasim run output");
        } catch (const std::exception& e) {
            std::cerr << "vrdmasim: error: " << e.what() << "\n";
            discard();
            return kExitFailed;
        }
        return -1;
    }
    void discard() {
        std::error_code ec;
        fs::remove_all(tmp_, ec);
    }
    // Renames the staged outputs into place; "" or what went wrong. An
    // earlier run's outputs that this run does not write again (its
    // trace.json, events.log, report) go with it: said, not done silently.
    std::string publish() {
        std::error_code ec;
        std::vector<std::string> gone;
        if (is_run_output(target_))
            for (fs::directory_iterator it(target_, ec), end; !ec && it != end; it.increment(ec)) {
                const std::string name = it->path().filename().string();
                if (name != kRunMarker && !fs::exists(tmp_ / name)) gone.push_back(name);
            }
        const std::string error = publish_run_output(tmp_, target_);
        if (error.empty() && !gone.empty()) {
            std::sort(gone.begin(), gone.end());
            std::string list;
            for (const auto& g : gone) list += (list.empty() ? "" : ", ") + g;
            std::cerr << "vrdmasim: note: --out " << out_ << " held an earlier run's outputs; replaced, with its "
                      << list << ", which this run did not write\n";
        }
        return error;
    }
    const fs::path& dir() const { return tmp_; }

private:
    std::string out_;
    fs::path target_, tmp_;
};

// Why a simulation that returned has no result, "" if it has one.
std::string unfinished_reason(const Config& cfg, System& sys, sc_core::sc_time& failed_at) {
    bool all_finished = true;
    for (const auto& w : sys.workloads()) all_finished = all_finished && w->ended();
    if (all_finished) return "";
    // With SC_EXIT_ON_STARVATION, sc_start returns at the last event before
    // the limit, not at the limit: events still pending mean the limit
    // stopped the run (simulated up to it: that is when it failed), none
    // left means starvation.
    std::string why = "the simulation ran out of events before the workload finished (deadlock)";
    if (sc_core::sc_time_stamp() >= sys.time_limit() || sc_core::sc_pending_activity()) {
        failed_at = sys.time_limit();
        why = "the workload did not finish within sim.time-limit = " + cfg.text(params_of<SimParams>().time_limit);
    }
    // What its programs wait in (a deadlock runs to the limit while the
    // kernel's daemons tick, or out of events).
    for (const auto& w : sys.workloads())
        if (!w->stalled().empty()) why += ": " + w->stalled();
    return why;
}

// The error of a failed run as printed and written to error.txt.
std::string failure_text(const Config& cfg, System& sys, const StatRegistry& stats, sc_core::sc_time failed_at,
                         const std::string& error) {
    std::ostringstream os;
    os << "simulation failed at " << format_time_ps(std::llround(failed_at.to_seconds() * 1e12)) << ": " << error;
    if (physical_mode(cfg)) {
        // The experiment may have wrecked the simulated kernel itself.
        const PhysicalFindings f = physical_findings(sys, stats);
        if (f.foreign_bytes_kernel > 0)
            os << ". PHYSICAL-ADDRESS EXPERIMENT: before this, the engine had written " << f.foreign_bytes_kernel
               << " B into frames the kernel held (page tables, or the old frames of a collapse or migration "
                  "in progress): a page table overwritten with payload makes the kernel map garbage, the likely "
                  "cause of this failure; a real kernel would crash or map wrong memory the same way (README "
                  "\"Why pinning exists\")";
    }
    return os.str();
}

// What a simulated run came to: its summaries, or why it has none.
struct RunResult {
    std::string error;   // why the run failed or cannot be trusted ("" if neither)
    bool failed = false;   // no result: error.txt, no summary
    bool invalid = false;   // a self-check was violated
    bool refused = false;   // failed at something the simulation refuses (Workload::refusal): exit status 2
    // With a region of interest, summary is the region's (from its own
    // statistics) and whole_summary the whole run's.
    Summary summary, whole_summary;
    StatRegistry region_stats;
};

// Whether the simulation that returned has a result: a simulation error, a
// workload that did not finish, or a region of interest the run never
// completed fail the run. A run that failed still leaves what helps find
// out why (configuration, statistics, trace, error.txt), but no
// summary.csv: it has no result.
void judge_end(const Config& cfg, System& sys, const StatRegistry& stats, const RegionOfInterest* roi, RunResult& r) {
    sc_core::sc_time failed_at = sc_core::sc_time_stamp();
    if (r.error.empty()) r.error = unfinished_reason(cfg, sys, failed_at);
    if (r.error.empty() && roi && !roi->incomplete().empty()) r.error = roi->incomplete();
    r.failed = !r.error.empty();
    if (!r.failed) return;
    for (const auto& w : sys.workloads()) r.refused = r.refused || !w->refusal().empty();
    r.error = failure_text(cfg, sys, stats, failed_at, r.error);
    std::cerr << "vrdmasim: error: " << r.error << "\n";
}

double summary_value(const Summary& from, const char* k) {
    for (const auto& kv : from)
        if (kv.first == k) return kv.second.empty() ? std::numeric_limits<double>::quiet_NaN() : std::stod(kv.second);
    throw std::logic_error(std::string("summary metric ") + k + " missing");
}

// The summaries of a run that finished; a summary built from missing
// statistics has no result: the run fails loudly (error.txt, no
// summary.csv, exit status 1).
void summarise(const Config& cfg, System& sys, StatRegistry& stats, RegionOfInterest* roi, double host_seconds,
               double build_seconds, RunResult& r) {
    try {
        r.whole_summary = make_summary(cfg, sys, stats, host_seconds, build_seconds);
        if (roi) {
            r.region_stats = stats.window();
            r.summary = make_summary(cfg, sys, r.region_stats, host_seconds, build_seconds, roi);
            if (roi->span_end() <= roi->span_begin())
                std::cerr << "vrdmasim: warning: the region of interest spans no simulated time (its transfers "
                             "finished at the instant its warm-up's last did): it has no throughput (an empty "
                             "throughput_gbps)\n";
        } else {
            r.summary = r.whole_summary;
        }
    } catch (const std::logic_error& e) {
        r.error = std::string("internal error: the summary cannot be computed: ") + e.what();
        std::cerr << "vrdmasim: error: " << r.error << "\n";
        r.failed = true;
    }
}

// Self-checks of every finished run: a violated invariant means a figure
// cannot be trusted, so the run fails loudly and writes no summary. The
// whole run's checks run on the whole run's figures, the region's on its own.
// A partitioned run's ranks each check what they simulate (and the
// statistics, merged, alike): every rank's violations, each once, in rank
// order, on every rank.
std::vector<Violation> gather_violations(Comm& ranks, const std::vector<Violation>& mine) {
    Bytes out;
    for (const Violation& v : mine) {
        out.insert(out.end(), v.invariant.begin(), v.invariant.end());
        out.push_back(0);
        out.insert(out.end(), v.detail.begin(), v.detail.end());
        out.push_back(0);
    }
    std::vector<Violation> all;
    std::set<std::pair<std::string, std::string>> seen;
    for (const Bytes& from : ranks.allgather(out)) {
        std::size_t at = 0;
        while (at < from.size()) {
            const auto field = [&] {
                const auto end = std::find(from.begin() + static_cast<std::ptrdiff_t>(at), from.end(), 0);
                std::string text(from.begin() + static_cast<std::ptrdiff_t>(at), end);
                at = static_cast<std::size_t>(end - from.begin()) + 1;
                return text;
            };
            Violation v;
            v.invariant = field();
            v.detail = field();
            if (seen.insert({v.invariant, v.detail}).second) all.push_back(std::move(v));
        }
    }
    return all;
}

void self_check(System& sys, const StatRegistry& stats, RegionOfInterest* roi, RunResult& r, Comm* ranks = nullptr) {
    RunFigures f = run_figures(sys);
    // What is checked is what is printed.
    f.throughput_gbps = summary_value(r.whole_summary, "throughput_gbps");
    f.post_window_gbps = summary_value(r.whole_summary, "post_window_throughput_gbps");
    f.link_util_max = summary_value(r.whole_summary, "link_util_max");
    std::vector<Violation> violations = check_invariants(sys, stats, f);
    if (roi) {
        RegionFigures g;
        g.begin_s = summary_value(r.summary, "region_start_us") * 1e-6;
        g.end_s = summary_value(r.summary, "region_end_us") * 1e-6;
        g.stats_s = roi->stats_seconds();
        g.throughput_gbps = summary_value(r.summary, "throughput_gbps");
        g.link_util_max = summary_value(r.summary, "link_util_max");
        for (auto& v : check_region(sys, stats, r.region_stats, g)) violations.push_back(std::move(v));
    }
    if (ranks) violations = gather_violations(*ranks, violations);
    if (violations.empty()) return;
    r.invalid = true;
    r.error = "run invariants violated (its figures cannot be trusted):\n" + describe(violations);
    std::cerr << "vrdmasim: error: " << r.error;
    r.summary.clear();
    r.whole_summary.clear();
}

// What the run's end says beyond failed/invalid, known before anything is
// written (the report states it): wrong data (exit 1), failed transfers
// (exit 3), and results that are neither (the physical-address
// experiment's verdict, application races).
struct Outcome {
    std::uint64_t mismatches = 0;
    std::string mismatch_text, transfer_error_text, findings;
};

Outcome outcome_of(const Config& cfg, System& sys, const StatRegistry& stats) {
    Outcome o;
    // Every job's transfers count (job 0's log is `log`).
    const TransferLog& log = sys.workload().log();
    std::uint64_t job_errors = 0;
    for (const auto& w : sys.workloads()) {
        o.mismatches += w->log().mismatches.value();
        if (w->job() != 0) job_errors += w->log().errors.value();
    }
    // The physical-address experiment: wrong data and foreign writes are
    // its result, reported loudly, not a failure of the run.
    if (physical_mode(cfg)) {
        o.mismatches = 0;
        std::ostringstream os;
        print_physical_verdict(os, cfg, physical_findings(sys, stats));
        o.findings = os.str();
    }
    // What the workloads' figures say (an application's own race, caught
    // by the byte check), and the models' warnings about their own figures.
    o.findings += System::workload_findings(cfg, stats) + System::model_warnings(cfg, stats);
    o.mismatch_text = std::to_string(o.mismatches) + " transfer(s) reported success but delivered wrong data";
    if (job_errors > 0)
        o.transfer_error_text =
            std::to_string(job_errors) + " transfer(s) of jobs 1.. failed" + transfer_error_causes(cfg, stats);
    else if (log.errors.value() > 0)
        o.transfer_error_text = std::to_string(log.errors.value()) + " of " + std::to_string(log.transfers.value()) +
                                " transfer(s) failed" + transfer_error_causes(cfg, stats);
    return o;
}

void write_summary_csv(std::ostream& os, const Summary& sum) {
    CsvRow head, row;
    for (const auto& kv : sum) {
        head.push_back(kv.first);
        row.push_back(kv.second);
    }
    write_csv_row(os, head);
    write_csv_row(os, row);
}

// A region of interest's sentence for the report.
std::string region_text(const Summary& summary, const RegionOfInterest& roi) {
    std::string begin, end;
    for (const auto& kv : summary) {
        if (kv.first == "region_start_us") begin = kv.second;
        if (kv.first == "region_end_us") end = kv.second;
    }
    return "These figures describe only the part of the run from " + begin + " us to " + end + " us: " +
           (roi.warmup() ? "after a warm-up of " + std::to_string(roi.warmup()) + " transfer(s), "
                         : std::string("from the start, ")) +
           (roi.length() ? std::to_string(roi.length()) + " transfer(s)" : std::string("to the end")) +
           " (roi.warmup-transfers, roi.transfers). The whole run's summary is in "
           "whole-run-summary.csv, the region's statistics in roi-stats.json; figures that have no "
           "value over a part of the run (peaks, gauges, ratios computed at the end) are empty.";
}

// A run stopped by a signal (Ctrl-C; mpirun's SIGTERM to its ranks when
// it is interrupted; a hang-up) says so as the writer, removes what it had
// begun (the writer's staged directory; another rank's trace spools in the
// temporary directory), and ends by that signal (status 128 + its number:
// a sweep tells an interrupted point from a failed one by it). A handler
// may only make async-signal-safe calls: the texts are made up front, and
// the files are found with getdents64 and removed with unlinkat and rmdir.
// What is left (a subdirectory; a run killed by SIGKILL) the next run
// removes (OutputStaging::start, remove_stale_spools).
namespace on_signal {
struct Text {
    int sig;
    std::string text;
};
struct Stop {
    std::vector<Text> texts;
    std::string staged;   // the writer's staged directory, emptied and removed
    std::string spool_dir, spool_prefix;   // another rank's spools: files named so there
};
Stop& stop() {
    static Stop s;
    return s;
}
extern "C" void on_stop(int sig) {
    const Stop& s = stop();
    for (const Text& t : s.texts)
        if (t.sig == sig) {
            const ssize_t ignored = ::write(STDERR_FILENO, t.text.data(), t.text.size());
            (void)ignored;
        }
    if (!s.staged.empty()) {
        child_processes::remove_entries(s.staged.c_str(), "");
        ::rmdir(s.staged.c_str());
    }
    if (!s.spool_prefix.empty()) child_processes::remove_entries(s.spool_dir.c_str(), s.spool_prefix.c_str());
    // What the run started (an MPI program's mpirun) ends first, cleanly.
    child_processes::end_all(2000);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}
void install() {
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}
// After the outputs are published: what the run started still ends first
// (an MPI program's mpirun, which the launcher waits for at the exit),
// then the default action.
extern "C" void on_stop_children(int sig) {
    child_processes::end_all(2000);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}
// Runs `fn` with the signals above held back, then gives them their
// default action again (what the handler would remove is gone or
// published), but for the processes the run started (on_stop_children).
template <class F>
auto held(F fn) {
    sigset_t block, old;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &old);
    auto r = fn();
    struct sigaction sa {};
    sa.sa_handler = on_stop_children;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return r;
}
// The writer: its message, and its staged outputs.
void writer_stops(const std::string& out, const fs::path& staged) {
    stop().staged = staged.string();
    for (const auto& [sig, name] : {std::pair<int, const char*>{SIGINT, "SIGINT"},
                                    {SIGTERM, "SIGTERM (an interrupted mpirun sends it to its ranks)"},
                                    {SIGHUP, "SIGHUP"}})
        stop().texts.push_back({sig, std::string("\nvrdmasim: interrupted by ") + name +
                                         " before the run ended: no output written to --out " + out + "\n"});
    install();
}
// Another rank: its trace spools, "<dir>/<prefix>*".
void spools_stop(const fs::path& spill) {
    stop().spool_dir = spill.parent_path().string();
    stop().spool_prefix = spill.filename().string();
    install();
}
}   // namespace on_signal

// Trace spools another rank left in the temporary directory when it was
// killed (vrdmasim-trace-<pid>-rank<r>.*, its pid gone): removed by the
// next traced multi-rank run on this host.
void remove_stale_spools(const fs::path& dir) {
    std::error_code ec;
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const std::string tag = "vrdmasim-trace-";
        if (name.rfind(tag, 0) != 0) continue;
        const auto dash = name.find('-', tag.size());
        if (dash == std::string::npos || name.compare(dash, 5, "-rank") != 0) continue;
        const std::string digits = name.substr(tag.size(), dash - tag.size());
        if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const pid_t pid = static_cast<pid_t>(std::atol(digits.c_str()));
        if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;   // alive (or not ours to ask)
        stale.push_back(it->path());
    }
    for (const auto& p : stale) fs::remove(p, ec);
}

// Everything a run has made, the outputs are written from.
struct RunOutputs {
    const Config& cfg;
    const StatRegistry& stats;
    const Tracer& tracer;
    const RunOptions& opts;
    const std::vector<std::string>& args;
    RunResult& result;
    const Outcome& outcome;
    RegionOfInterest* roi;
    TimeSeries* series;
};

// report.html, inside the staging directory (renamed into place with the
// rest: never half-written where the user looks). Returns whether it was written.
bool write_report_file(const fs::path& dir, const RunOutputs& o) {
    ReportInputs in;
    const RunResult& r = o.result;
    if (r.failed || r.invalid || o.outcome.mismatches > 0) {
        in.verdict = ReportInputs::Verdict::Failed;
        in.verdict_text = r.failed || r.invalid ? r.error : o.outcome.mismatch_text;
    } else if (!o.outcome.transfer_error_text.empty()) {
        in.verdict = ReportInputs::Verdict::TransferErrors;
        in.verdict_text = o.outcome.transfer_error_text;
    }
    in.findings = o.outcome.findings;
    in.command = command_line(o.args);
    in.out_dir = o.opts.out;
    in.version = PROJECT_VERSION;
    in.sim_seconds = sc_core::sc_time_stamp().to_seconds();
    in.summary = r.summary;
    if (o.roi && !r.summary.empty()) in.region = region_text(r.summary, *o.roi);
    in.timeseries = o.series;
    in.metrics = &summary_metrics();
    in.config = &o.cfg;
    in.stats = &o.stats;
    in.story = &o.tracer.story();
    in.story_dropped = o.tracer.story_dropped();
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string f = e.path().filename().string();
        if (f != kRunMarker) in.files.push_back(f);
    }
    std::sort(in.files.begin(), in.files.end());
    std::ofstream html(dir / kReportFile);
    write_report(html, in);
    html.close();
    return static_cast<bool>(html);
}

// The outputs into the staging directory; throws when one cannot be written.
void write_outputs(const fs::path& dir, const RunOutputs& o, std::chrono::steady_clock::time_point host_end) {
    RunResult& r = o.result;
    std::ofstream ini(dir / "config.ini");
    ini << "# vrdmasim " << PROJECT_VERSION << " effective configuration; re-run with: vrdmasim run config.ini\n";
    o.cfg.write_ini(ini, System::settings_not_used(o.cfg));
    std::ofstream js(dir / "stats.json");
    o.stats.write_json(js);
    std::ofstream txt(dir / "stats.txt");
    o.stats.write_text(txt);
    bool written = ini && js && txt;
    if (o.roi && r.region_stats.registered() > 0) {
        std::ofstream rjs(dir / "roi-stats.json");
        r.region_stats.write_json(rjs);
        written = written && rjs;
    }
    if (o.series) {
        std::ofstream ts(dir / "timeseries.csv");
        o.series->write_csv(ts);
        written = written && ts;
    }
    if (r.failed || r.invalid) {
        std::ofstream err(dir / "error.txt");
        err << r.error << "\n";
        written = written && err;
    } else {
        std::ofstream csv(dir / "summary.csv");
        // The outputs' time: from the simulation's end to here (the trace
        // and log merged and closed, the statistics written).
        const double output_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - host_end).count();
        for (Summary* sum : {&r.summary, &r.whole_summary})
            for (auto& kv : *sum)
                if (kv.first == "host_output_seconds") kv.second = format_metric(output_seconds, 4);
        write_summary_csv(csv, r.summary);
        written = written && csv;
        if (o.roi) {
            std::ofstream whole(dir / "whole-run-summary.csv");
            write_summary_csv(whole, r.whole_summary);
            written = written && whole;
        }
    }
    if (o.opts.report) written = write_report_file(dir, o) && written;
    if (!written) throw std::runtime_error("write failed (disk full?)");
}

// The trace and the log into the staging directory, as asked; false when
// one cannot be opened (reported).
bool open_tracer(Tracer& tracer, const RunOptions& opts, const fs::path& dir, System& sys) {
    try {
        if (opts.trace || opts.narrate)
            tracer.open(opts.trace ? (dir / (opts.trace_gzip ? "trace.json.gz" : "trace.json")).string() : "",
                        opts.narrate ? (dir / "events.log").string() : "");
        tracer.set_log_filter(opts.log_filter);
        tracer.set_trace_filter(opts.trace_filter);
        tracer.set_window(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(opts.trace_window.first)),
                          sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(opts.trace_window.second)));
        // A trace or log that grows big says so while the run simulates
        // (the files are written at the end, in time order), with what it
        // is likely to come to: the size so far scaled by the transfers
        // still to do, when the workloads know how many they plan.
        if (opts.trace || opts.narrate)
            tracer.watch_size(opts.trace_warn_bytes, [&sys, &opts](const char* file, std::uint64_t bytes) {
                warn_output_size(
                    std::cerr,
                    std::string(file) == "trace" ? (opts.trace_gzip ? "trace.json.gz" : "trace.json") : "events.log",
                    bytes, sys, opts.progress);
            });
        // The report's timeline: the first steps the models note, kept in
        // memory whether or not a trace or log is written.
        if (opts.report) tracer.keep_story(kReportStorySteps);
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return false;
    }
    return true;
}

void warn_unmatched_filters(const Tracer& tracer) {
    for (const auto& term : tracer.unmatched_filter_terms())
        std::cerr << "vrdmasim: warning: --log-filter: '" << term
                  << "' matched no line of the log (no such node or model, or it narrated nothing)\n";
    for (const auto& term : tracer.unmatched_trace_filter_terms())
        std::cerr << "vrdmasim: warning: --trace-filter: '" << term
                  << "' matched no track of the trace (no such node or model, or it recorded nothing)\n";
}

// The terminal summary: the headline, then every figure this run has (not
// 0, not empty); --all: every one, as summary.csv.
void print_summary(const Summary& summary, bool all) {
    const auto& head = headline_metrics();
    auto headline = [&head](const std::string& k) { return std::find(head.begin(), head.end(), k) != head.end(); };
    Summary shown;
    for (const std::string& k : head)
        for (const auto& kv : summary)
            if (kv.first == k) shown.push_back(kv);
    std::size_t hidden = 0;
    for (const auto& kv : summary) {
        if (headline(kv.first)) continue;
        if (all || (!zero_figure(kv.second) && !kv.second.empty())) shown.push_back(kv);
        else ++hidden;
    }
    std::cout << "\n";
    std::size_t width = 0;   // the longest column name and a space: names never run into their values
    for (const auto& kv : shown) width = std::max(width, kv.first.size() + 1);
    for (const auto& kv : shown)
        std::cout << "  " << std::left << std::setw(static_cast<int>(width)) << kv.first << kv.second << "\n";
    if (hidden)
        std::cout << "  (" << hidden << " more figures are 0 or have no value in this run: --all prints them; "
                  << "summary.csv has every one)\n";
}

void print_speed(const StatRegistry& stats, double host_seconds) {
    const double sim_s = sc_core::sc_time_stamp().to_seconds();
    const double events = static_cast<double>(stats.sum_counters("transactions"));
    std::cout << "\nsimulated " << format_metric(sim_s * 1e6, 6) << " us in " << format_metric(host_seconds, 3)
              << " s of host time: " << format_metric(host_seconds > 0 ? sim_s * 1e6 / host_seconds : 0, 4)
              << " simulated us per host second, " << format_metric(host_seconds > 0 ? events / host_seconds : 0, 4)
              << " events per host second\n";
}

// The simulation under callgrind's instrumentation, when valgrind runs it
// (bench --instructions counts the simulation loop only: not elaboration,
// not writing the outputs; outside valgrind these are a few instructions
// that do nothing). Returns the error that stopped it, "" if none.
std::string run_simulation(System& sys, bool progress) {
    try {
#if VRDMASIM_HAVE_CALLGRIND
        CALLGRIND_START_INSTRUMENTATION;
#endif
        simulate(sys, progress);
#if VRDMASIM_HAVE_CALLGRIND
        CALLGRIND_STOP_INSTRUMENTATION;
#endif
    } catch (const sc_core::sc_report& r) {
        // An exception thrown inside a process reaches here as SystemC's
        // report of it: its message alone, without SystemC's file and line.
        return r.get_msg();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

// The process ends when run_command returns (sc_main returns its status),
// so the System is not taken apart: SystemC removes each port, export and
// module from its registries by a linear search, quadratic in the system's
// size (about a second at 1,296 nodes, minutes at 16,384), for memory the
// process is about to give back anyway. Kept reachable from a static, it is
// not reported as a leak either.
struct KeepToExit {
    std::unique_ptr<System>& sys;
    ~KeepToExit() { g_system_kept_to_exit = sys.release(); }
};

// run --check: the configuration builds. The work planned, which a sweep
// weighs its points by (sweep_detail::point_weight), as far as the
// workloads know it in advance: the transfers they will finish (as the
// progress line counts them) and the payload bytes those deliver
// (Workload::planned_bytes), not a parameter some kinds do not read.
void print_check(System& sys) {
    std::uint64_t transfers = 0, bytes = 0;
    bool bytes_known = true;
    std::set<std::string> unknown;   // the kinds that do not know their transfers
    for (const auto& w : sys.workloads()) {
        const std::uint64_t t = w->planned_transfers();
        if (t == 0) unknown.insert(w->kind());
        transfers += t;
        const std::int64_t b = w->planned_bytes();
        if (b < 0) bytes_known = false;
        else bytes += static_cast<std::uint64_t>(b);
    }
    std::cout << "vrdmasim: configuration ok, nothing simulated; planned: ";
    if (!unknown.empty()) {
        std::cout << "transfers not known in advance (workload.kind =";
        for (const std::string& k : unknown) std::cout << " " << k;
        std::cout << ")\n";
    } else if (bytes_known) std::cout << transfers << " transfers, " << bytes << " bytes of payload\n";
    else std::cout << transfers << " transfers (their bytes not known in advance)\n";
}

// The exit status of a run whose outputs are in place, with what it prints last.
int finish(const RunOptions& opts, const RunResult& r, const Outcome& outcome, const StatRegistry& stats,
           double host_seconds) {
    if (r.failed || r.invalid) {
        if (!opts.quiet)
            std::cout << "statistics of the failed run in " << opts.out << " (error.txt, no summary.csv"
                      << (opts.report ? "; report.html says why" : "") << ")\n";
        return r.refused ? kExitBadConfig : kExitFailed;
    }
    if (!opts.quiet) {
        print_summary(r.summary, opts.all);
        print_speed(stats, host_seconds);
        std::cout << "outputs in " << opts.out << "\n";
        if (opts.report)
            std::cout << "report: " << (fs::path(opts.out) / kReportFile).string() << " (open it in a browser)\n";
    }
    // Application races the overlap workload's check caught (unguarded),
    // and the physical-address experiment's verdict: results, reported, not
    // failures of the simulator.
    std::cerr << outcome.findings;
    if (outcome.mismatches > 0) {
        std::cerr << "vrdmasim: error: " << outcome.mismatch_text << "\n";
        return kExitFailed;
    }
    // Simulated to the end and every check passed, but transfers failed: a
    // result, not a success. Say how many and what the run counted that
    // explains them.
    if (!outcome.transfer_error_text.empty()) {
        std::cerr << "vrdmasim: " << outcome.transfer_error_text << "\n";
        return kExitTransferErrors;
    }
    return kExitOk;
}

// `mpirun -np N vrdmasim run` with N > 1: the ranks of one simulation
// (docs/scaling.md). The rank from the launcher's environment (-1 count on
// an error, printed), and what a partitioned run does not carry yet.
ShardFromEnv mpi_rank_or_error() {
    try {
        return mpi_rank_from_environment([](const char* name) { return std::getenv(name); });
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        ShardFromEnv bad;
        bad.count = -1;
        return bad;
    }
}

std::string partitioned_refusal(const RunOptions& opts, const Config& cfg) {
    const std::string why =
        " is not built for a run split across MPI ranks yet (docs/scaling.md): run it as one process";
    if (opts.sample_ps > 0) return "--sample-interval" + why;
    if (opts.report) return "--report" + why;
    if (RoiParams::on(cfg)) return "a region of interest (roi.*)" + why;
    return "";
}

}   // namespace

namespace {

// A partitioned run (more than one rank): joins the ranks in `mpi`. An
// exit status if the run ends here, else -1.
int join_ranks(const ShardFromEnv& rank, const RunOptions& opts, const Config& cfg, std::unique_ptr<MpiComm>& mpi) {
    if (const std::string no = partitioned_refusal(opts, cfg); !no.empty()) {
        if (rank.index == 0) std::cerr << "vrdmasim: error: " << no << "\n";
        return kExitBadConfig;
    }
    try {
        mpi = std::make_unique<MpiComm>();
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: rank " << rank.index << " of " << rank.count << " (" << rank.from
                  << "): " << e.what() << "\n";
        return kExitFailed;
    }
    if (mpi->size() != static_cast<unsigned>(rank.count) || mpi->rank() != static_cast<unsigned>(rank.index)) {
        std::cerr << "vrdmasim: error: " << rank.from << " says rank " << rank.index << " of " << rank.count
                  << ", MPI rank " << mpi->rank() << " of " << mpi->size() << "\n";
        mpi->abort(kExitFailed);
    }
    return -1;
}

// Builds the system (and its region of interest); on ranks, the lowest
// refusing rank says why, once. An exit status if it is refused, else -1.
int build_system(const SimContext& ctx, Config& cfg, MpiComm* mpi, std::unique_ptr<System>& sys,
                 std::unique_ptr<RegionOfInterest>& roi) {
    std::string build_error;
    try {
        sys = mpi ? std::make_unique<System>(ctx, mpi->size(), mpi->rank()) : std::make_unique<System>(ctx);
        if (RoiParams::on(cfg)) roi = std::make_unique<RegionOfInterest>(*sys, ctx.stats);
    } catch (const ConfigError& e) {
        build_error = e.what();
    }
    if (mpi) {
        // The same configuration on every rank refuses alike.
        const std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
        const std::uint64_t first = mpi->min(build_error.empty() ? none : mpi->rank());
        if (first != none) {
            if (first == mpi->rank()) std::cerr << "vrdmasim: error: " << build_error << "\n";
            return kExitBadConfig;
        }
        // The blocks chosen, as config.ini records them.
        cfg.set(params_of<SimParams>().partition.name(), sys->partition().text(), "partition");
    } else if (!build_error.empty()) {
        std::cerr << "vrdmasim: error: " << build_error << "\n";
        return kExitBadConfig;
    }
    return -1;
}

// The outputs' staging directory and the trace: rank 0 writes them; the
// other ranks record alike, into spools beside no file, which rank 0 writes
// with its own at the end (trace_gather.hpp). An exit status if they cannot
// be started, else -1.
int start_outputs(OutputStaging& staging, Tracer& tracer, const RunOptions& opts, System& sys, MpiComm* mpi,
                  bool writer) {
    if (writer)
        if (const int status = staging.start(); status >= 0) {
            if (mpi) mpi->abort(status);
            return status;
        }
    if (writer) on_signal::writer_stops(opts.out, staging.dir());
    if (writer && !open_tracer(tracer, opts, staging.dir(), sys)) {
        staging.discard();
        if (mpi) mpi->abort(kExitFailed);
        return kExitFailed;
    }
    if (!writer && (opts.trace || opts.narrate)) {
        remove_stale_spools(fs::temp_directory_path());
        const fs::path spill = fs::temp_directory_path() /
                               ("vrdmasim-trace-" + std::to_string(::getpid()) + "-rank" + std::to_string(mpi->rank()));
        on_signal::spools_stop(spill);
        tracer.record_only(opts.trace, opts.narrate, spill.string());
        tracer.set_log_filter(opts.log_filter);
        tracer.set_trace_filter(opts.trace_filter);
        tracer.set_window(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(opts.trace_window.first)),
                          sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(opts.trace_window.second)));
    }
    return -1;
}

// The simulation: in one process, or in windows across the ranks (their
// statistics merged at the end). Its error ("" if none) in `result`.
void simulate(System& sys, StatRegistry& stats, const RunOptions& opts, MpiComm* mpi, RunResult& result,
              std::uint64_t& windows, std::uint64_t& exchanged) {
    if (mpi) {
        Windows loop(*mpi, sys.cut_mail(), sys.lookahead(), sys.time_limit());
        SyncParty sync(sys.global_sync());
        CourierParty courier(sys);
        loop.add(sync);
        loop.add(courier);
        loop.before_each([&sys](sc_core::sc_time end) { sys.window_ends_at(end); });
        result.error = loop.run();
        // What is left runs to the last rank's last event (merge_ranks).
        sys.window_ends_at(sc_core::sc_max_time());
        windows = loop.windows();
        exchanged = loop.exchanged_bytes();
        merge_ranks(sys, stats, *mpi, !result.error.empty());
    } else {
        result.error = run_simulation(sys, opts.progress);
        sys.end_run();
        stats.flush_timed();   // nothing more will finish
    }
    // A thread that overflowed its stack may have written another's: no
    // result of the run can be trusted (src/sim/thread_stacks.hpp).
    if (std::string overflow = thread_stacks::check(); !overflow.empty())
        result.error = result.error.empty() ? overflow : overflow + "; and then: " + result.error;
}

// An error of one rank (a stack overflow found at its end) is the run's:
// the lowest failing rank's, on every rank.
void take_rank_error(MpiComm& mpi, RunResult& result) {
    for (const Bytes& e : mpi.allgather(Bytes(result.error.begin(), result.error.end())))
        if (!e.empty()) {
            result.error = std::string(e.begin(), e.end());
            break;
        }
}

// The summary's columns of a run on ranks: their count, windows, bytes
// exchanged and the largest rank's peak memory.
void rank_columns(MpiComm& mpi, std::uint64_t windows, std::uint64_t exchanged, RunResult& result) {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const double rss = static_cast<double>(ru.ru_maxrss) / 1024.0;   // KiB on Linux
    const std::uint64_t most_rss =
        std::numeric_limits<std::uint64_t>::max() -
        mpi.min(std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(std::llround(rss * 100)));
    std::uint64_t all_windows = windows, all_bytes = 0;
    for (const Bytes& b : mpi.allgather([&] {
             Bytes v;
             ByteWriter(v).put(exchanged);
             return v;
         }()))
        all_bytes += ByteReader(b).get<std::uint64_t>();
    for (Summary* sum : {&result.summary, &result.whole_summary})
        for (auto& kv : *sum) {
            if (kv.first == "ranks") kv.second = std::to_string(mpi.size());
            if (kv.first == "host_windows") kv.second = std::to_string(all_windows);
            if (kv.first == "host_exchanged_bytes") kv.second = std::to_string(all_bytes);
            if (kv.first == "host_peak_rss_mib_max") kv.second = format_metric(double(most_rss) / 100, 4);
        }
}

// The trace and the log are outputs: one that could not be written (a full
// disk, a file-size limit: while the run simulated or now) fails the run as
// any output does, with nothing half-written left, and ends every rank (one
// left in a collective would wait for ever). kExitFailed then, else -1.
int close_trace(Tracer& tracer, const RunOptions& opts, OutputStaging& staging, MpiComm* mpi, bool writer) {
    try {
        if (mpi && (opts.trace || opts.narrate)) gather_trace(tracer, *mpi);
        tracer.close();
    } catch (const std::exception&) {
        if (tracer.write_error().empty()) throw;
    }
    if (!tracer.write_error().empty()) {
        std::cerr << "vrdmasim: error: " << tracer.write_error() << "\n";
        if (writer) staging.discard();
        if (mpi) mpi->abort(kExitFailed);
        return kExitFailed;
    }
    return -1;
}

// Rank 0: the outputs written into the staging directory and published
// whole, or not at all. kExitFailed if they could not be, else -1.
int publish_outputs(OutputStaging& staging, const RunOutputs& outputs, std::chrono::steady_clock::time_point host_end) {
    try {
        write_outputs(staging.dir(), outputs, host_end);
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: writing outputs: " << e.what() << "\n";
        staging.discard();
        return kExitFailed;
    }
    // Published whole or not at all: a signal now waits until the outputs
    // are in place (or not), then has its default action.
    const std::string unpublished = on_signal::held([&] { return staging.publish(); });
    if (!unpublished.empty()) {
        std::cerr << "vrdmasim: error: --out " << outputs.opts.out << ": " << unpublished << "\n";
        return kExitFailed;
    }
    return -1;
}

// run_command with `mpi` owned by the caller, which ends every rank if one
// throws (run_command).
int run_command_ranks(const ParamRegistry& reg, const std::vector<std::string>& args, std::unique_ptr<MpiComm>& mpi) {
    Config cfg(reg);
    RunOptions opts;
    if (const int status = parse_run_command(reg, args, cfg, opts); status >= 0) return status;
    const ShardFromEnv rank = mpi_rank_or_error();
    if (rank.count < 0) return kExitBadConfig;
    // A partitioned run: every rank simulates its boards, rank 0 writes
    // the outputs (docs/scaling.md).
    if (rank.count > 1)
        if (const int status = join_ranks(rank, opts, cfg, mpi); status >= 0) return status;
    const bool writer = !mpi || mpi->rank() == 0;

    StatRegistry stats;
    Tracer tracer;
    SimContext ctx{cfg, stats, tracer};
    std::unique_ptr<System> sys;
    const auto build_start = std::chrono::steady_clock::now();
    std::unique_ptr<RegionOfInterest> roi;
    if (const int status = build_system(ctx, cfg, mpi.get(), sys, roi); status >= 0) return status;
    KeepToExit keep_to_exit{sys};
    if (opts.check) {
        if (writer) print_check(*sys);
        return kExitOk;
    }

    // An exception thrown inside a process ends the simulation as SystemC's
    // report of it, which the run then states in its own words (run_simulation,
    // judge_end): not printed a second time, raw, by SystemC (E549).
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_SIMULATION_UNCAUGHT_EXCEPTION_, sc_core::SC_THROW);

    OutputStaging staging(opts.out);
    if (const int status = start_outputs(staging, tracer, opts, *sys, mpi.get(), writer); status >= 0) return status;
    if (writer) ctx.files_dir = staging.dir().string();

    std::unique_ptr<TimeSeries> series;
    if (opts.sample_ps > 0) {
        series = std::make_unique<TimeSeries>(*sys, stats,
                                              sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(opts.sample_ps)));
        series->start();
    }
    if (roi) roi->start();

    const auto host_start = std::chrono::steady_clock::now();
    const double build_seconds = std::chrono::duration<double>(host_start - build_start).count();
    RunResult result;
    std::uint64_t windows = 0, exchanged = 0;
    simulate(*sys, stats, opts, mpi.get(), result, windows, exchanged);
    const auto host_end = std::chrono::steady_clock::now();
    const double host_seconds = std::chrono::duration<double>(host_end - host_start).count();
    if (series) series->finish();
    if (roi) roi->finish();
    if (mpi) take_rank_error(*mpi, result);
    if (const int status = close_trace(tracer, opts, staging, mpi.get(), writer); status >= 0) return status;
    if (writer) warn_unmatched_filters(tracer);
    // Every rank judges, summarises and checks the run (the checks of what
    // it simulates need it); rank 0 alone says so and writes the outputs.
    std::ostringstream quiet_rank;
    std::streambuf* const cerr_buf = writer ? nullptr : std::cerr.rdbuf(quiet_rank.rdbuf());
    judge_end(cfg, *sys, stats, roi.get(), result);
    if (!result.failed) summarise(cfg, *sys, stats, roi.get(), host_seconds, build_seconds, result);
    if (mpi && !result.failed) rank_columns(*mpi, windows, exchanged, result);
    if (!result.failed) self_check(*sys, stats, roi.get(), result, mpi.get());
    if (cerr_buf) std::cerr.rdbuf(cerr_buf);
    if (!writer) return result.failed || result.invalid ? kExitFailed : kExitOk;
    const Outcome outcome = outcome_of(cfg, *sys, stats);
    // The sums are done: their index goes before the outputs sort every
    // name (the run's peak memory on a big torus); a later sum builds it again.
    stats.release_sum_indexes();
    if (const int status = publish_outputs(
            staging, RunOutputs{cfg, stats, tracer, opts, args, result, outcome, roi.get(), series.get()}, host_end);
        status >= 0)
        return status;
    return finish(opts, result, outcome, stats, host_seconds);
}

}   // namespace

int run_command(const ParamRegistry& reg, const std::vector<std::string>& args) {
    std::unique_ptr<MpiComm> mpi;
    try {
        return run_command_ranks(reg, args, mpi);
    } catch (const std::exception& e) {
        if (!mpi) throw;
        // One rank failing where the others go on (an output it cannot
        // write, an error after the simulation) would leave them waiting
        // in a collective for ever: it says why and ends every rank.
        std::cerr << "vrdmasim: error: rank " << mpi->rank() << ": " << e.what() << "\n";
        mpi->abort(kExitFailed);
    }
}

}   // namespace vrdmasim
