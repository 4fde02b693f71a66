#include "run.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "core/csv.hpp"
#include "core/output_dir.hpp"
#include "system.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace vrdmasim {

namespace {

double peak_rss_mib() {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0;   // ru_maxrss is in KiB on Linux
}

std::string fmt(double v, int prec = 6) {
    std::ostringstream os;
    os << std::setprecision(prec) << v;
    return os.str();
}

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

// Summary metrics: one row, in a fixed order.
using Summary = std::vector<std::pair<std::string, std::string>>;

Summary make_summary(const Config& cfg, System& sys, StatRegistry& stats, double host_seconds) {
    TransferLog& log = sys.workload().log();
    const double sim_s = sc_core::sc_time_stamp().to_seconds();
    const double span_s = log.last_done > log.first_post ? (log.last_done - log.first_post).to_seconds() : 0.0;
    const double gbps = span_s > 0 ? static_cast<double>(log.bytes_delivered.value()) * 8.0 / span_s / 1e9 : 0.0;
    Summary s;
    s.emplace_back("workload", sys.workload().kind());
    s.emplace_back("strategy", cfg.text("rdma.strategy"));
    s.emplace_back("nodes", std::to_string(sys.size()));
    s.emplace_back("sim_seconds", fmt(sim_s, 9));
    s.emplace_back("host_seconds", fmt(host_seconds, 4));
    s.emplace_back("sim_events", std::to_string(stats.sum_counters("transactions")));
    s.emplace_back("packets", std::to_string(stats.sum_counters("packets_sent")));
    s.emplace_back("transfers", std::to_string(log.transfers.value()));
    s.emplace_back("transfer_errors", std::to_string(log.errors.value()));
    s.emplace_back("bytes_delivered", std::to_string(log.bytes_delivered.value()));
    s.emplace_back("bytes_verified", std::to_string(log.bytes_verified.value()));
    s.emplace_back("data_mismatches", std::to_string(log.mismatches.value()));
    s.emplace_back("throughput_gbps", fmt(gbps));
    s.emplace_back("latency_us_mean", fmt(log.latency_us.mean()));
    s.emplace_back("latency_us_p50", fmt(log.latency_us.quantile(0.5)));
    s.emplace_back("latency_us_p99", fmt(log.latency_us.quantile(0.99)));
    // The network: the median latency by hop count ("1:2.1;2:3.0"), and the
    // links between routers (not the NI links): the busiest one's busy time
    // over the workload's span (first post to last completion), the mean
    // over all of them, and the busiest one's name.
    std::string by_hops;
    for (const auto& kv : log.latency_by_hops()) {
        if (kv.second->count() == 0) continue;
        if (!by_hops.empty()) by_hops += ";";
        by_hops += std::to_string(kv.first) + ":" + fmt(kv.second->quantile(0.5), 4);
    }
    s.emplace_back("latency_us_p50_by_hops", by_hops);
    double busy_max = 0, busy_sum = 0;
    std::string busiest;
    std::uint64_t packet_hops = 0;
    for (const auto& link : sys.links()) {
        packet_hops += link->packets();
        const double b = link->busy_us();
        busy_sum += b;
        if (busiest.empty() || b > busy_max) {
            busy_max = b;
            busiest = link->name();
        }
    }
    const double span_us = span_s * 1e6;
    const double n_links = static_cast<double>(sys.links().size());
    s.emplace_back("link_util_max", fmt(span_us > 0 ? busy_max / span_us : 0.0));
    s.emplace_back("link_util_mean", fmt(span_us > 0 && n_links > 0 ? busy_sum / n_links / span_us : 0.0));
    s.emplace_back("busiest_link", busiest);
    // Packets times the links between routers they crossed (data, responses, control).
    s.emplace_back("packet_hops", std::to_string(packet_hops));
    // Address translation (zero when smmu.enabled = false).
    const std::uint64_t hits = stats.sum_counters("micro_tlb_hits");
    const std::uint64_t misses = stats.sum_counters("micro_tlb_misses");
    s.emplace_back("smmu_translations", std::to_string(stats.sum_counters("translated")));
    s.emplace_back("smmu_micro_tlb_hit_rate", fmt(hits + misses ? static_cast<double>(hits) / (hits + misses) : 0.0));
    s.emplace_back("smmu_macro_tlb_hits", std::to_string(stats.sum_counters("macro_tlb_hits")));
    s.emplace_back("smmu_walks", std::to_string(stats.sum_counters("tcu.walks")));
    s.emplace_back("smmu_walk_reads", std::to_string(stats.sum_counters("tcu.walk_reads")));
    s.emplace_back("smmu_faults",
                   std::to_string(stats.sum_counters("faults_translation") + stats.sum_counters("faults_access_flag") +
                                  stats.sum_counters("faults_permission") + stats.sum_counters("faults_external")));
    // The operating system: page faults by kind and by source, the SMMU
    // fault path's service time, pins, swap, THP and invalidations.
    s.emplace_back("faults_minor", std::to_string(stats.sum_counters("faults_minor") + stats.sum_counters("faults_huge")));
    s.emplace_back("faults_major", std::to_string(stats.sum_counters("faults_major")));
    s.emplace_back("faults_smmu_read", std::to_string(stats.sum_counters("faults_read")));
    s.emplace_back("faults_smmu_write", std::to_string(stats.sum_counters("faults_write")));
    const Histogram service = stats.merge_histograms("smmu_driver.service_time");
    s.emplace_back("fault_service_us_p50", fmt(service.quantile(0.5)));
    s.emplace_back("fault_service_us_p99", fmt(service.quantile(0.99)));
    s.emplace_back("pages_pinned", std::to_string(stats.sum_counters("pages_pinned")));
    s.emplace_back("swap_outs", std::to_string(stats.sum_counters("swap_outs")));
    s.emplace_back("swap_ins", std::to_string(stats.sum_counters("swap_ins")));
    s.emplace_back("thp_collapses", std::to_string(stats.sum_counters("collapses")));
    s.emplace_back("thp_splits", std::to_string(stats.sum_counters("huge_splits")));
    s.emplace_back("invalidations", std::to_string(stats.sum_counters("vm.invalidations")));
    // The RDMA library's strategy and the engine's fault recovery.
    s.emplace_back("registration_us", fmt(stats.sum_scalars("rdma.registration_time")));
    s.emplace_back("pinned_peak_bytes", fmt(stats.sum_scalars("rdma.pinned_bytes_peak"), 12));
    s.emplace_back("registration_failures", std::to_string(stats.sum_counters("rdma.registration_failures")));
    s.emplace_back("pin_cache_hits", std::to_string(stats.sum_counters("rdma.cache_hits")));
    s.emplace_back("pin_cache_misses", std::to_string(stats.sum_counters("rdma.cache_misses")));
    s.emplace_back("parks", std::to_string(stats.sum_counters("dma.parks")));
    s.emplace_back("nacks", std::to_string(stats.sum_counters("dma.nacks_sent")));
    s.emplace_back("retransmitted_bytes", std::to_string(stats.sum_counters("dma.retransmitted_bytes")));
    s.emplace_back("fault_timeouts", std::to_string(stats.sum_counters("dma.fault_timeouts")));
    s.emplace_back("kernel_copy_bytes", std::to_string(stats.sum_counters("dma.kernel_copy_bytes")));
    s.emplace_back("rx_stalled_us", fmt(stats.sum_scalars("dma.rx_stalled")));
    s.emplace_back("cpu_busy_us", fmt(stats.sum_scalars("busy_time")));
    s.emplace_back("peak_rss_mib", fmt(peak_rss_mib(), 4));
    return s;
}

void print_usage(std::ostream& os) {
    os << "usage: vrdmasim run [CONFIG.ini ...] [--section.key=value ...] [--out DIR] [--trace] [--log] [--quiet]\n";
}

}  // namespace

int run_command(const ParamRegistry& reg, const std::vector<std::string>& args) {
    po::options_description opts("run options");
    opts.add_options()
        ("help,h", "show this help")
        ("out,o", po::value<std::string>(), "output directory (default: vrdmasim-out/run-DATE-TIME); an existing one is replaced only if "
         "empty or an earlier run's output (it holds .vrdmasim-run and nothing but a run's files)")
        ("trace", "write trace.json (Chrome/Perfetto trace events)")
        ("log", "write events.log (narrated timeline)")
        ("quiet,q", "print nothing but errors")
        ("config", po::value<std::vector<std::string>>(), "config files, applied in order");
    po::positional_options_description pos;
    pos.add("config", -1);

    Config cfg(reg);
    std::string out;
    bool trace = false, narrate = false, quiet = false;
    // "--section.key value" is the same as "--section.key=value" for declared
    // parameters (otherwise the value would be taken for a config file).
    std::vector<std::string> joined;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() > 2 && a.compare(0, 2, "--") == 0 && a.find('=') == std::string::npos &&
            reg.find(a.substr(2)) && i + 1 < args.size() && args[i + 1].compare(0, 1, "-") != 0) {
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
            std::cout << opts << "\nEvery parameter is also an option: see `vrdmasim params`.\n";
            return kExitOk;
        }
        if (vm.count("config"))
            for (const auto& f : vm["config"].as<std::vector<std::string>>()) cfg.apply_file(f);
        cfg.apply_command_line(po::collect_unrecognized(parsed.options, po::exclude_positional));
        out = vm.count("out") ? vm["out"].as<std::string>() : default_out_dir();
        if (out.empty()) throw ConfigError("--out: the output directory name is empty");
        trace = vm.count("trace") > 0;
        narrate = vm.count("log") > 0;
        quiet = vm.count("quiet") > 0;
        check_out_dir(out);
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return kExitBadConfig;
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        print_usage(std::cerr);
        return kExitBadConfig;
    }

    StatRegistry stats;
    Tracer tracer;
    SimContext ctx{cfg, stats, tracer};
    std::unique_ptr<System> sys;
    try {
        sys = std::make_unique<System>(ctx);
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return kExitBadConfig;
    }

    // Everything is written into a fresh directory beside the target and
    // renamed into place at the end: no half-written output.
    // "DIR/" names DIR: without the trailing separator, the temporary
    // directory below lands beside DIR, not inside it.
    fs::path target = fs::absolute(out).lexically_normal();
    if (target.filename().empty()) target = target.parent_path();
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    remove_stale_partials(target.parent_path());   // left by killed runs
    const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".partial-" + std::to_string(getpid()));
    fs::remove_all(tmp, ec);
    if (!fs::create_directory(tmp, ec)) {
        std::cerr << "vrdmasim: error: cannot create output directory " << tmp << ": " << ec.message() << "\n";
        return kExitBadConfig;
    }
    auto discard = [&]() { fs::remove_all(tmp, ec); };
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
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        discard();
        return kExitFailed;
    }

    const auto host_start = std::chrono::steady_clock::now();
    std::string sim_error;
    try {
        sc_core::sc_start(sys->time_limit(), sc_core::SC_EXIT_ON_STARVATION);
    } catch (const std::exception& e) {
        sim_error = e.what();
    }
    const double host_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
    tracer.close();

    if (sim_error.empty() && !sys->workload().finished()) {
        // With SC_EXIT_ON_STARVATION, sc_start returns at the last event before
        // the limit, not at the limit: events still pending mean the limit
        // stopped the run, none left means starvation.
        sim_error = sc_core::sc_time_stamp() >= sys->time_limit() || sc_core::sc_pending_activity()
                        ? "the workload did not finish within sim.time-limit = " + cfg.text("sim.time-limit")
                        : "the simulation ran out of events before the workload finished (deadlock)";
    }
    // A run that failed still leaves what helps find out why (configuration,
    // statistics, trace, error.txt), but no summary.csv: it has no result.
    const bool failed = !sim_error.empty();
    if (failed) {
        std::ostringstream os;
        os << "simulation failed at " << sc_core::sc_time_stamp() << ": " << sim_error;
        sim_error = os.str();
        std::cerr << "vrdmasim: error: " << sim_error << "\n";
    }
    const Summary summary = failed ? Summary{} : make_summary(cfg, *sys, stats, host_seconds);
    try {
        std::ofstream ini(tmp / "config.ini");
        ini << "# vrdmasim " << PROJECT_VERSION << " effective configuration; re-run with: vrdmasim run config.ini\n";
        cfg.write_ini(ini);
        std::ofstream js(tmp / "stats.json");
        stats.write_json(js);
        std::ofstream txt(tmp / "stats.txt");
        stats.write_text(txt);
        bool written = ini && js && txt;
        if (failed) {
            std::ofstream err(tmp / "error.txt");
            err << sim_error << "\n";
            written = written && err;
        } else {
            std::ofstream csv(tmp / "summary.csv");
            CsvRow head, row;
            for (const auto& kv : summary) {
                head.push_back(kv.first);
                row.push_back(kv.second);
            }
            write_csv_row(csv, head);
            write_csv_row(csv, row);
            written = written && csv;
        }
        if (!written) throw std::runtime_error("write failed (disk full?)");
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: writing outputs: " << e.what() << "\n";
        discard();
        return kExitFailed;
    }
    if (fs::exists(target)) {
        const fs::path old = target.parent_path() / ("." + target.filename().string() + ".old-" + std::to_string(getpid()));
        fs::rename(target, old, ec);
        if (!ec) fs::remove_all(old, ec);
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        std::cerr << "vrdmasim: error: cannot move outputs into " << target << ": " << ec.message() << "\n";
        discard();
        return kExitFailed;
    }
    if (failed) {
        if (!quiet) std::cout << "statistics of the failed run in " << out << " (error.txt, no summary.csv)\n";
        return kExitFailed;
    }

    const TransferLog& log = sys->workload().log();
    if (!quiet) {
        std::cout << "\n";
        for (const auto& kv : summary) std::cout << "  " << std::left << std::setw(24) << kv.first << kv.second << "\n";
        const double sim_s = sc_core::sc_time_stamp().to_seconds();
        const double events = static_cast<double>(stats.sum_counters("transactions"));
        std::cout << "\nsimulated " << fmt(sim_s * 1e6, 6) << " us in " << fmt(host_seconds, 3)
                  << " s of host time: " << fmt(host_seconds > 0 ? sim_s * 1e6 / host_seconds : 0, 4)
                  << " simulated us per host second, "
                  << fmt(host_seconds > 0 ? events / host_seconds : 0, 4) << " events per host second\n";
        std::cout << "outputs in " << out << "\n";
    }
    if (log.mismatches.value() > 0) {
        std::cerr << "vrdmasim: error: " << log.mismatches.value()
                  << " transfer(s) reported success but delivered wrong data\n";
        return kExitFailed;
    }
    return kExitOk;
}

}  // namespace vrdmasim
