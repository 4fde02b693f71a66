#include "src/cli/run.hpp"

#if VRDMASIM_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

#include <algorithm>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <stdexcept>
#include <sstream>

#include <boost/program_options.hpp>

#include "src/core/csv.hpp"
#include "src/core/output_dir.hpp"
#include "src/sim/invariants.hpp"
#include "src/sim/physical_engine.hpp"
#include "src/sim/progress.hpp"
#include "src/tools/report.hpp"
#include "src/sim/roi.hpp"
#include "models/dma/shadow_translator.hpp"
#include "src/sim/summary.hpp"
#include "src/sim/timeseries.hpp"
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
    if (!fs::exists(fs::symlink_status(out, ec))) return;
    if (!fs::is_directory(fs::symlink_status(out, ec)))
        throw ConfigError("--out " + out + ": exists and is not a directory; refusing to replace it");
    if (fs::is_empty(out, ec) || is_run_output(out)) return;
    throw ConfigError("--out " + out + ": directory exists and is not an earlier vrdmasim run's output (no " +
                      kRunMarker + " marker, or files a run does not write); refusing to replace it");
}

using Summary = std::vector<std::pair<std::string, std::string>>;

// What the statistics say about why transfers failed: ", because ..." or "".
std::string transfer_error_causes(const Config& cfg, const StatRegistry& stats) {
    std::vector<std::string> why;
    const std::uint64_t reg = stats.sum_counters("rdma.registration_failures");
    if (reg) {
        // Why the pins behind them were refused: RLIMIT_MEMLOCK, or frames.
        const std::uint64_t memlock = stats.sum_counters("vm.memlock_refusals");
        const std::uint64_t nomem = stats.sum_counters("vm.pin_no_memory");
        std::string cause;
        if (memlock)
            cause += std::to_string(memlock) +
                     " pin(s) beyond vm.memlock-limit = " + cfg.text(params_of<VmParams>().memlock_limit);
        if (nomem)
            cause += std::string(cause.empty() ? "" : ", ") + std::to_string(nomem) +
                     " pin(s) refused for lack of memory (ENOMEM: the node's page frames cannot hold "
                     "every pinned page resident)";
        if (cause.empty()) cause = "vm.memlock-limit = " + cfg.text(params_of<VmParams>().memlock_limit);
        why.push_back(std::to_string(reg) + " registration(s) failed (rdma.strategy = " +
                      cfg.text(params_of<RdmaParams>().strategy) + ": " + cause + ")");
    }
    const std::uint64_t faults = stats.sum_counters("faults_translation") + stats.sum_counters("faults_access_flag") +
                                 stats.sum_counters("faults_permission") + stats.sum_counters("faults_external");
    if (faults && !cfg[params_of<PldmaParams>().fault_tolerant])
        why.push_back(std::to_string(faults) +
                      " SMMU fault(s) that the original engine (dma.fault-tolerant = false) "
                      "cannot survive");
    else if (faults) why.push_back(std::to_string(faults) + " SMMU fault(s)");
    const std::uint64_t unresolved = stats.sum_counters("unresolved");
    if (unresolved) why.push_back(std::to_string(unresolved) + " fault(s) the fault library could not resolve");
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

void print_usage(std::ostream& os) {
    os << "usage: vrdmasim run [CONFIG.ini ...] [--section.key=value ...] [--out DIR] [--trace] [--log] [--quiet] [--all]"
          " [--no-progress] [--report]\n";
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

// --log-filter's terms: node or model names, comma-separated, none empty.
std::vector<std::string> parse_log_filter(const std::string& text, bool narrating) {
    if (!narrating) throw ConfigError("--log-filter needs --log (it filters the narrated log)");
    std::vector<std::string> terms;
    std::stringstream ss(text);
    for (std::string t; std::getline(ss, t, ',');) {
        if (t.empty() || t.find_first_of(" .\t") != std::string::npos)
            throw ConfigError("--log-filter: '" + text +
                              "': give node and model names separated by commas (node1,smmu)");
        terms.push_back(t);
    }
    if (terms.empty()) throw ConfigError("--log-filter: no node or model named");
    return terms;
}

namespace {
// The System of the run, kept (not destroyed) until the process exits: see
// run_command. A plain pointer: nothing at exit frees or forgets it.
System* g_system_kept_to_exit = nullptr;
}   // namespace

int run_command(const ParamRegistry& reg, const std::vector<std::string>& args) {
    po::options_description opts("run options");
    opts.add_options()("help,h", "show this help")(
        "out,o", po::value<std::string>(),
        "output directory (default: vrdmasim-out/run-DATE-TIME); an existing one is replaced only if "
        "empty or an earlier run's output (it holds .vrdmasim-run and nothing but a run's files)")(
        "trace", "write trace.json (Chrome/Perfetto trace events)")("log", "write events.log (narrated timeline)")(
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
        "second of host time)")("config", po::value<std::vector<std::string>>(), "config files, applied in order");
    po::positional_options_description pos;
    pos.add("config", -1);

    Config cfg(reg);
    std::string out;
    bool trace = false, narrate = false, quiet = false, progress = false, report = false, all = false;
    std::int64_t sample_ps = 0;   // --sample-interval, 0: no time series
    std::vector<std::string> log_filter;
    // "--section.key value" is the same as "--section.key=value" for declared
    // parameters (otherwise the value would be taken for a config file).
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
    try {
        po::parsed_options parsed =
            po::command_line_parser(joined)
                .options(opts)
                .positional(pos)
                .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                .allow_unregistered()
                .run();
        po::variables_map vm;
        po::store(parsed, vm);
        po::notify(vm);
        if (vm.count("help")) {
            print_usage(std::cout);
            std::cout
                << opts << "\nEvery parameter is also an option: see `vrdmasim params`.\n"
                << "Exit status: 0 success; 1 failed (data mismatch, unfinished workload, simulation error, or a\n"
                   "violated self-check: its figures cannot be trusted); 2 bad command line or configuration;\n"
                   "3 simulated to the end, but transfers failed.\n";
            return kExitOk;
        }
        if (vm.count("config"))
            for (const auto& f : vm["config"].as<std::vector<std::string>>()) cfg.apply_file(f);
        cfg.apply_command_line(po::collect_unrecognized(parsed.options, po::exclude_positional));
        System::resolve(cfg);
        out = vm.count("out") ? vm["out"].as<std::string>() : default_out_dir();
        if (out.empty()) throw ConfigError("--out: the output directory name is empty");
        trace = vm.count("trace") > 0;
        narrate = vm.count("log") > 0;
        report = vm.count("report") > 0;
        if (vm.count("log-filter")) log_filter = parse_log_filter(vm["log-filter"].as<std::string>(), narrate);
        quiet = vm.count("quiet") > 0;
        all = vm.count("all") > 0;
        if (vm.count("sample-interval")) {
            const std::string text = vm["sample-interval"].as<std::string>();
            try {
                sample_ps = parse_time_ps(text);
            } catch (const std::invalid_argument& e) {
                throw ConfigError("--sample-interval " + text + ": " + e.what());
            }
            // A sample reads statistics that processes running ahead (up to
            // sim.quantum) have already moved: a shorter interval would
            // draw that jitter, not the system.
            const std::int64_t quantum = cfg.ps(params_of<SimParams>().quantum);
            if (sample_ps < quantum || sample_ps <= 0)
                throw ConfigError("--sample-interval " + text +
                                  ": shorter than sim.quantum = " + cfg.text(params_of<SimParams>().quantum) +
                                  " (a sample can only be trusted to within the quantum: processes run up to it "
                                  "ahead of the sampler)");
        }
        progress = RunProgress::wanted(vm.count("no-progress") > 0, quiet);
        check_out_dir(out);
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return kExitBadConfig;
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: " << printable(e.what()) << "\n";
        print_usage(std::cerr);
        return kExitBadConfig;
    }

    StatRegistry stats;
    Tracer tracer;
    SimContext ctx{cfg, stats, tracer};
    std::unique_ptr<System> sys;
    const auto build_start = std::chrono::steady_clock::now();
    std::unique_ptr<RegionOfInterest> roi;
    try {
        sys = std::make_unique<System>(ctx);
        if (RoiParams::on(cfg)) roi = std::make_unique<RegionOfInterest>(*sys, stats);
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return kExitBadConfig;
    }
    // The process ends when this command returns (sc_main returns its
    // status), so the System is not taken apart: SystemC removes each port,
    // export and module from its registries by a linear search, quadratic
    // in the system's size (about a second at 1,296 nodes, minutes at
    // 16,384), for memory the process is about to give back anyway. Kept
    // reachable from a static, it is not reported as a leak either.
    struct KeepToExit {
        std::unique_ptr<System>& sys;
        ~KeepToExit() { g_system_kept_to_exit = sys.release(); }
    } keep_to_exit{sys};

    // Everything is written into a fresh directory beside the target and
    // renamed into place at the end: no half-written output.
    // "DIR/" names DIR: without the trailing separator, the temporary
    // directory below lands beside DIR, not inside it.
    fs::path target = fs::absolute(out).lexically_normal();
    if (target.filename().empty()) target = target.parent_path();
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    remove_stale_partials(target.parent_path());   // left by killed runs
    const fs::path tmp =
        target.parent_path() / ("." + target.filename().string() + ".partial-" + std::to_string(getpid()));
    fs::remove_all(tmp, ec);
    if (!fs::create_directory(tmp, ec)) {
        std::cerr << "vrdmasim: error: cannot create output directory " << tmp << ": " << ec.message() << "\n";
        return kExitBadConfig;
    }
    // The output path is claimed now, not only checked: a directory made at
    // it, or a file put into it, while the run simulates is never deleted.
    bool claimed_fresh = false;
    const std::string claim = claim_run_output(target, claimed_fresh);
    if (!claim.empty()) {
        std::cerr << "vrdmasim: error: --out " << out << ": " << claim << "\n";
        fs::remove_all(tmp, ec);
        return kExitBadConfig;
    }
    auto discard = [&]() {
        fs::remove_all(tmp, ec);
        release_run_claim(target, claimed_fresh);
    };
    try {
        // First, so that a killed run's leftover is recognisably ours.
        write_marker(tmp, kRunMarker, "vrdmasim run output");
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        discard();
        return kExitFailed;
    }

    try {
        if (trace || narrate)
            tracer.open(trace ? (tmp / "trace.json").string() : "", narrate ? (tmp / "events.log").string() : "");
        tracer.set_log_filter(log_filter);
        // The report's timeline: the first steps the models note, kept in
        // memory whether or not a trace or log is written.
        if (report) tracer.keep_story(kReportStorySteps);
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        discard();
        return kExitFailed;
    }

    std::unique_ptr<TimeSeries> series;
    if (sample_ps > 0) {
        series = std::make_unique<TimeSeries>(*sys, stats,
                                              sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(sample_ps)));
        series->start();
    }
    if (roi) roi->start();

    const auto host_start = std::chrono::steady_clock::now();
    const double build_seconds = std::chrono::duration<double>(host_start - build_start).count();
    std::string sim_error;
    try {
        // Under `valgrind --tool=callgrind --instr-atstart=no` (bench
        // --instructions), only the simulation loop is counted: not
        // elaboration, not writing the outputs. Outside valgrind these are
        // a few instructions that do nothing.
#if VRDMASIM_HAVE_CALLGRIND
        CALLGRIND_START_INSTRUMENTATION;
#endif
        simulate(*sys, progress);
#if VRDMASIM_HAVE_CALLGRIND
        CALLGRIND_STOP_INSTRUMENTATION;
#endif
    } catch (const sc_core::sc_report& r) {
        // An exception thrown inside a process reaches here as SystemC's
        // report of it: its message alone, without SystemC's file and line.
        sim_error = r.get_msg();
    } catch (const std::exception& e) {
        sim_error = e.what();
    }
    const auto host_end = std::chrono::steady_clock::now();
    const double host_seconds = std::chrono::duration<double>(host_end - host_start).count();
    if (series) series->finish();
    if (roi) roi->finish();
    tracer.close();
    for (const auto& term : tracer.unmatched_filter_terms())
        std::cerr << "vrdmasim: warning: --log-filter: '" << term
                  << "' matched no line of the log (no such node or model, or it narrated nothing)\n";

    bool all_finished = true;
    for (const auto& w : sys->workloads()) all_finished = all_finished && w->finished();
    sc_core::sc_time failed_at = sc_core::sc_time_stamp();
    if (sim_error.empty() && !all_finished) {
        // With SC_EXIT_ON_STARVATION, sc_start returns at the last event before
        // the limit, not at the limit: events still pending mean the limit
        // stopped the run (simulated up to it: that is when it failed), none
        // left means starvation.
        if (sc_core::sc_time_stamp() >= sys->time_limit() || sc_core::sc_pending_activity()) {
            failed_at = sys->time_limit();
            sim_error =
                "the workload did not finish within sim.time-limit = " + cfg.text(params_of<SimParams>().time_limit);
        } else {
            sim_error = "the simulation ran out of events before the workload finished (deadlock)";
        }
    }
    // A region of interest the run never completed: it has no result.
    if (sim_error.empty() && roi && !roi->incomplete().empty()) sim_error = roi->incomplete();
    // A run that failed still leaves what helps find out why (configuration,
    // statistics, trace, error.txt), but no summary.csv: it has no result.
    bool failed = !sim_error.empty();
    if (failed) {
        std::ostringstream os;
        os << "simulation failed at " << format_time_ps(std::llround(failed_at.to_seconds() * 1e12)) << ": "
           << sim_error;
        if (physical_mode(cfg)) {
            // The experiment may have wrecked the simulated kernel itself.
            const PhysicalFindings f = physical_findings(*sys, stats);
            if (f.foreign_bytes_kernel > 0)
                os << ". PHYSICAL-ADDRESS EXPERIMENT: before this, the engine had written " << f.foreign_bytes_kernel
                   << " B into frames the kernel held (page tables, or the old frames of a collapse or migration "
                      "in progress): a page table overwritten with payload makes the kernel map garbage, the likely "
                      "cause of this failure; a real kernel would crash or map wrong memory the same way (README "
                      "\"Why pinning exists\")";
        }
        sim_error = os.str();
        std::cerr << "vrdmasim: error: " << sim_error << "\n";
    }
    // With a region of interest, summary.csv is the region's (from its own
    // statistics) and whole_summary the whole run's; the whole run's
    // self-checks run on the whole run's figures, the region's on its own.
    Summary summary, whole_summary;
    StatRegistry region_stats;
    if (!failed) {
        try {
            whole_summary = make_summary(cfg, *sys, stats, host_seconds, build_seconds);
            if (roi) {
                region_stats = stats.window();
                summary = make_summary(cfg, *sys, region_stats, host_seconds, build_seconds, roi.get());
            } else {
                summary = whole_summary;
            }
        } catch (const std::logic_error& e) {
            // A summary built from missing statistics has no result: the run
            // fails loudly (error.txt, no summary.csv, exit status 1).
            sim_error = std::string("internal error: the summary cannot be computed: ") + e.what();
            std::cerr << "vrdmasim: error: " << sim_error << "\n";
            failed = true;
        }
    }
    // Self-checks of every finished run: a violated invariant means a figure
    // cannot be trusted, so the run fails loudly and writes no summary.
    std::vector<Violation> violations;
    if (!failed) {
        auto metric = [&](const Summary& from, const char* k) {
            for (const auto& kv : from)
                if (kv.first == k) return std::stod(kv.second);
            throw std::logic_error(std::string("summary metric ") + k + " missing");
        };
        RunFigures f = run_figures(*sys);
        // What is checked is what is printed.
        f.throughput_gbps = metric(whole_summary, "throughput_gbps");
        f.post_window_gbps = metric(whole_summary, "post_window_throughput_gbps");
        f.link_util_max = metric(whole_summary, "link_util_max");
        violations = check_invariants(*sys, stats, f);
        if (roi) {
            RegionFigures r;
            r.begin_s = metric(summary, "region_start_us") * 1e-6;
            r.end_s = metric(summary, "region_end_us") * 1e-6;
            r.stats_s = roi->stats_seconds();
            r.throughput_gbps = metric(summary, "throughput_gbps");
            r.link_util_max = metric(summary, "link_util_max");
            for (auto& v : check_region(*sys, stats, region_stats, r)) violations.push_back(std::move(v));
        }
        if (!violations.empty()) {
            sim_error = "run invariants violated (its figures cannot be trusted):\n" + describe(violations);
            std::cerr << "vrdmasim: error: " << sim_error;
            summary.clear();
            whole_summary.clear();
        }
    }
    const bool invalid = !violations.empty();
    // What the run's end says beyond failed/invalid, known before anything
    // is written (the report states it): wrong data (exit 1), failed
    // transfers (exit 3). Every job's transfers count (job 0's log is `log`).
    const TransferLog& log = sys->workload().log();
    std::uint64_t mismatches = 0, job_errors = 0;
    for (const auto& w : sys->workloads()) {
        mismatches += w->log().mismatches.value();
        if (w->job() != 0) job_errors += w->log().errors.value();
    }
    // The physical-address experiment: wrong data and foreign writes are
    // its result, reported loudly below, not a failure of the run.
    std::string findings;   // the experiment's result, printed below: not a failure, not a plain success
    if (physical_mode(cfg)) {
        mismatches = 0;
        std::ostringstream os;
        print_physical_verdict(os, cfg, physical_findings(*sys, stats));
        findings = os.str();
    }
    if (const std::uint64_t raced = stats.sum_counters("overlap.corrupted_transfers"))
        findings += "vrdmasim: " + std::to_string(raced) +
                    " transfer(s) corrupted by the application's own stores into buffers in flight (an application "
                    "race, caught by the byte check; not a simulator failure)\n";
    const std::string mismatch_text =
        std::to_string(mismatches) + " transfer(s) reported success but delivered wrong data";
    std::string transfer_error_text;
    if (job_errors > 0)
        transfer_error_text =
            std::to_string(job_errors) + " transfer(s) of jobs 1.. failed" + transfer_error_causes(cfg, stats);
    else if (log.errors.value() > 0)
        transfer_error_text = std::to_string(log.errors.value()) + " of " + std::to_string(log.transfers.value()) +
                              " transfer(s) failed" + transfer_error_causes(cfg, stats);
    // The sums are done: their index goes before the outputs sort every
    // name (the run's peak memory on a big torus); a later sum builds it again.
    stats.release_sum_indexes();
    try {
        std::ofstream ini(tmp / "config.ini");
        ini << "# vrdmasim " << PROJECT_VERSION << " effective configuration; re-run with: vrdmasim run config.ini\n";
        cfg.write_ini(ini);
        std::ofstream js(tmp / "stats.json");
        stats.write_json(js);
        std::ofstream txt(tmp / "stats.txt");
        stats.write_text(txt);
        bool written = ini && js && txt;
        if (roi && region_stats.registered() > 0) {
            std::ofstream rjs(tmp / "roi-stats.json");
            region_stats.write_json(rjs);
            written = written && rjs;
        }
        if (series) {
            std::ofstream ts(tmp / "timeseries.csv");
            series->write_csv(ts);
            written = written && ts;
        }
        if (failed || invalid) {
            std::ofstream err(tmp / "error.txt");
            err << sim_error << "\n";
            written = written && err;
        } else {
            std::ofstream csv(tmp / "summary.csv");
            // The outputs' time: from the simulation's end to here (the
            // trace and log merged and closed, the statistics written).
            const double output_seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - host_end).count();
            for (auto& kv : summary)
                if (kv.first == "host_output_seconds") kv.second = format_metric(output_seconds, 4);
            for (auto& kv : whole_summary)
                if (kv.first == "host_output_seconds") kv.second = format_metric(output_seconds, 4);
            const auto write_summary = [](std::ostream& os, const Summary& sum) {
                CsvRow head, row;
                for (const auto& kv : sum) {
                    head.push_back(kv.first);
                    row.push_back(kv.second);
                }
                write_csv_row(os, head);
                write_csv_row(os, row);
            };
            write_summary(csv, summary);
            written = written && csv;
            if (roi) {
                std::ofstream whole(tmp / "whole-run-summary.csv");
                write_summary(whole, whole_summary);
                written = written && whole;
            }
        }
        if (report) {
            // Inside the temporary directory, renamed into place with the
            // rest below: never half-written where the user looks.
            ReportInputs in;
            if (failed || invalid || mismatches > 0) {
                in.verdict = ReportInputs::Verdict::Failed;
                in.verdict_text = failed || invalid ? sim_error : mismatch_text;
            } else if (!transfer_error_text.empty()) {
                in.verdict = ReportInputs::Verdict::TransferErrors;
                in.verdict_text = transfer_error_text;
            }
            in.findings = findings;
            in.command = command_line(args);
            in.out_dir = out;
            in.version = PROJECT_VERSION;
            in.sim_seconds = sc_core::sc_time_stamp().to_seconds();
            in.summary = summary;
            if (roi && !summary.empty()) {
                std::string begin, end;
                for (const auto& kv : summary) {
                    if (kv.first == "region_start_us") begin = kv.second;
                    if (kv.first == "region_end_us") end = kv.second;
                }
                in.region =
                    "These figures describe only the part of the run from " + begin + " us to " + end + " us: " +
                    (roi->warmup() ? "after a warm-up of " + std::to_string(roi->warmup()) + " transfer(s), "
                                   : std::string("from the start, ")) +
                    (roi->length() ? std::to_string(roi->length()) + " transfer(s)" : std::string("to the end")) +
                    " (roi.warmup-transfers, roi.transfers). The whole run's summary is in "
                    "whole-run-summary.csv, the region's statistics in roi-stats.json; figures that have no "
                    "value over a part of the run (peaks, gauges, ratios computed at the end) are empty.";
            }
            in.timeseries = series.get();
            in.metrics = &summary_metrics();
            in.config = &cfg;
            in.stats = &stats;
            in.story = &tracer.story();
            in.story_dropped = tracer.story_dropped();
            for (const auto& e : fs::directory_iterator(tmp)) {
                const std::string f = e.path().filename().string();
                if (f != kRunMarker) in.files.push_back(f);
            }
            std::sort(in.files.begin(), in.files.end());
            std::ofstream html(tmp / kReportFile);
            write_report(html, in);
            html.close();
            written = written && html;
        }
        if (!written) throw std::runtime_error("write failed (disk full?)");
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: writing outputs: " << e.what() << "\n";
        discard();
        return kExitFailed;
    }
    const std::string unpublished = publish_run_output(tmp, target);
    if (!unpublished.empty()) {
        std::cerr << "vrdmasim: error: --out " << out << ": " << unpublished << "\n";
        return kExitFailed;
    }
    if (failed || invalid) {
        if (!quiet)
            std::cout << "statistics of the failed run in " << out << " (error.txt, no summary.csv"
                      << (report ? "; report.html says why" : "") << ")\n";
        return kExitFailed;
    }

    if (!quiet) {
        // The headline, then every figure this run has (not 0, not empty);
        // --all: every one, as summary.csv.
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
        const double sim_s = sc_core::sc_time_stamp().to_seconds();
        const double events = static_cast<double>(stats.sum_counters("transactions"));
        std::cout << "\nsimulated " << format_metric(sim_s * 1e6, 6) << " us in " << format_metric(host_seconds, 3)
                  << " s of host time: " << format_metric(host_seconds > 0 ? sim_s * 1e6 / host_seconds : 0, 4)
                  << " simulated us per host second, " << format_metric(host_seconds > 0 ? events / host_seconds : 0, 4)
                  << " events per host second\n";
        std::cout << "outputs in " << out << "\n";
        if (report) std::cout << "report: " << (fs::path(out) / kReportFile).string() << " (open it in a browser)\n";
    }
    // Application races the overlap workload's check caught (unguarded),
    // and the physical-address experiment's verdict: results, reported,
    // not failures of the simulator.
    std::cerr << findings;
    if (mismatches > 0) {
        std::cerr << "vrdmasim: error: " << mismatch_text << "\n";
        return kExitFailed;
    }
    // Simulated to the end and every check passed, but transfers failed: a
    // result, not a success. Say how many and what the run counted that
    // explains them.
    if (!transfer_error_text.empty()) {
        std::cerr << "vrdmasim: " << transfer_error_text << "\n";
        return kExitTransferErrors;
    }
    return kExitOk;
}

}   // namespace vrdmasim
