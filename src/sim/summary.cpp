#include "src/sim/summary.hpp"

#include <sys/resource.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "src/sim/energy.hpp"
#include "src/sim/roi.hpp"
#include "src/sim/system.hpp"
#include "src/sim/node.hpp"
#include "library/rdma/process.hpp"
#include "library/rdma/strategy/strategy.hpp"
#include "library/messaging/stats.hpp"
#include "workloads/registry.hpp"

namespace vrdmasim {

namespace {

// The run-level metrics that open the table: what ran, for how long.
void declare_run_metrics(MetricRegistry& reg) {
    reg.add_supplied("workload", "text", "`workload.kind` of the run.");
    reg.add_supplied("strategy", "text", "`rdma.strategy` of the run.");
    reg.add_supplied("nodes", "", "MPSoCs simulated.");
    reg.add_supplied("sim_seconds", "s", "Simulated time at the end of the run.");
    reg.add_supplied("host_seconds", "s", "Wall-clock time the simulation took on the host.");
    reg.add_supplied("region_start_us", "us",
                     "Where the part of the run this summary describes begins: the workload's first action, or "
                     "with a region of interest (`roi.*`, docs/metrics.md \"Region of interest\") the "
                     "completion of its warm-up's last transfer. Every figure below is of this part alone.");
    reg.add_supplied("region_end_us", "us",
                     "Where it ends: the workload's last completion, or the region of interest's last transfer's.");
    reg.sum_counters("sim_events",
                     "Transactions served by the models (sum of every `*.transactions` counter: bus, DRAM, "
                     "links, PLDMA registers and packets, SSD).",
                     {"transactions"});
    reg.add_supplied("transfers", "", "RDMA transfers that finished, successfully or not.");
    reg.add_supplied("transfer_errors", "", "Transfers that completed with an error status.");
    reg.add_supplied("bytes_delivered", "B", "Payload bytes of the transfers that reported success.");
    reg.add_supplied("bytes_verified", "B", "Delivered bytes compared with the source at the destination.");
    reg.add_supplied("data_mismatches", "",
                     "Transfers reported successful whose destination bytes differ from the source (any makes "
                     "the run fail, exit status 1).");
    reg.add_supplied(
        "throughput_gbps", "Gb/s",
        "Delivered bytes × 8 over the workload's whole span, end to end: from its first action "
        "(allocation, registration, pre-faulting: everything a program does before its first post) "
        "to its last completion. The headline figure: a strategy's up-front cost is in it. With a region of interest, "
        "the bytes that came in inside the region (`region_start_us` to `region_end_us`) × 8 over it: the payload "
        "job 0's engines accepted, each packet's by the time it crossed the link into its engine "
        "(`*.dma.payload_in_pd1`), and its CPU copies (`workload.local_payload_in`), so a transfer that straddles an "
        "end counts only for its part inside and no region can show more than the links carried (docs/metrics.md "
        "\"Region of interest\").");
    reg.add_supplied(
        "post_window_throughput_gbps", "Gb/s",
        "Delivered bytes × 8 over the post window only, first post to last completion: what the "
        "transfers achieve once set up, without the up-front cost (`throughput_gbps` has it). Empty with a region of interest (it has no "
        "post window of its own).");
    reg.add_supplied("end_to_end_us", "us",
                     "The workload's whole span: first action to last completion (the `throughput_gbps` span).");
    reg.add_supplied(
        "setup_us", "us",
        "The workload's first action to its first post: allocation, up-front registration "
        "(pin-static, pin-deferred waits, receive areas) and pre-faulting. Empty with a region of interest.");
    reg.add_supplied("job_throughput_gbps", "text",
                     "End-to-end throughput of each job (node.processes: process p of every node is job p), "
                     "`job:Gb/s` "
                     "pairs separated by `;` (`0:12.7;1:6.9`); the columns above are job 0's, the other jobs' "
                     "statistics are `jobP.workload.*` (`library/rdma/README.md` \"Many processes and channels\").");
    reg.add_supplied("jobs_bytes_delivered", "B",
                     "Payload bytes every job's transfers delivered (`bytes_delivered` is job 0's; the same with "
                     "one job): the bytes the energy per byte is over.");
    reg.add_supplied("jobs_transfer_errors", "",
                     "Transfers of every job that completed with an error status (`transfer_errors` is job 0's; "
                     "the same with one job): a run with any exits with status 3.");
    reg.add_supplied("latency_us_mean", "us",
                     "Mean transfer latency: stream and cluster workloads, doorbell to the completion seen by "
                     "the application; pingpong, half the round trip; synthetic, a message's creation to its last "
                     "tail out of the destination's NI link, every message (`workloads/README.md`). Only transfers "
                     "that rang a doorbell count (one refused at registration has no latency); empty when "
                     "none did.");
    reg.add_supplied("latency_us_p50", "us", "Median transfer latency (empty when no transfer rang a doorbell).");
    reg.add_supplied("latency_us_p99", "us",
                     "99th-percentile transfer latency (empty when no transfer rang a doorbell).");
    reg.add_supplied("latency_us_p50_by_hops", "text",
                     "Median latency per number of router-to-router hops, `hops:us` pairs separated by `;` "
                     "(`1:2.1;2:3.0`); histograms `workload.latency_hops<h>` in stats.json.");
    reg.add_supplied("link_util_max", "fraction",
                     "Busy time of the busiest link between routers (not the NI links) over the workload's "
                     "span (of all jobs together: first post to last completion of any).");
    reg.add_supplied("link_util_mean", "fraction", "Mean over all links between routers of busy time over the span.");
    reg.add_supplied("busiest_link", "text", "Name of the link of `link_util_max`.");
    reg.add_supplied("packet_hops", "",
                     "Packets (data, responses, control) times the router-to-router links they crossed.");
}

// The host's own figure, at the end of the table.
void declare_host_metrics(MetricRegistry& reg) {
    reg.add_supplied("peak_rss_mib", "MiB", "Peak resident memory of the simulator process on the host.");
    reg.add_supplied("host_huge_pages_mib", "MiB",
                     "The simulator's memory backed by the host's transparent huge pages at the simulation's end "
                     "(AnonHugePages of /proc/self/smaps_rollup; the executable's allocator asks for them, and "
                     "0 where the host's THP is `never`; empty where not known).");
    reg.add_supplied("host_build_seconds", "s",
                     "Wall-clock time building the simulated system (elaboration: models, sockets, processes), "
                     "before the simulation; not in `host_seconds`.");
    reg.add_supplied("host_output_seconds", "s",
                     "Wall-clock time from the simulation's end to writing summary.csv: the trace and log merged "
                     "and closed, the statistics written; not in `host_seconds`.");
    reg.add_supplied("ranks", "",
                     "MPI ranks the run was split across (`mpirun -np N vrdmasim run`, docs/scaling.md); 1 in one "
                     "process. The figures above are the same for any number.");
    reg.add_supplied("host_windows", "",
                     "Conservative windows the ranks of a partitioned run simulated in step (each at most a board "
                     "link's latency long); 0 in one process.");
    reg.add_supplied("host_exchanged_bytes", "B",
                     "Bytes the ranks of a partitioned run sent each other at the windows' ends (cut-link packets "
                     "and credits, the global rendezvous), summed over the ranks; 0 in one process.");
    reg.add_supplied("host_peak_rss_mib_max", "MiB",
                     "The largest peak resident memory of any rank of a partitioned run (`peak_rss_mib` is rank "
                     "0's); that of the process in one process.");
}

MetricRegistry build_summary_metrics() {
    MetricRegistry reg;
    declare_run_metrics(reg);
    Smmu500::declare_metrics(reg);
    Vm::declare_metrics(reg);
    FileSystem::declare_metrics(reg);
    RemoteBlock::declare_metrics(reg);
    SmmuDriver::declare_metrics(reg);
    Registrar::declare_metrics(reg);
    Prefetcher::declare_metrics(reg);
    MsgStats::declare_metrics(reg, Workload::uses_two_sided_library);
    Pldma::declare_metrics(reg);
    Router::declare_metrics(reg);
    ShadowTranslator::declare_metrics(reg);
    ShadowPager::declare_metrics(reg);
    FrameCheck::declare_metrics(reg);
    CpuCores::declare_metrics(reg);
    RdmaProcess::declare_metrics(reg);
    BufferGuard::declare_metrics(reg);
    workload_kinds::declare_metrics(reg);   // each workload's own (workloads/registry.hpp)
    declare_energy_metrics(reg);
    declare_host_metrics(reg);
    return reg;
}

}   // namespace

const std::vector<std::string>& headline_metrics() {
    static const std::vector<std::string> keys{"workload",        "strategy",        "nodes",         "transfers",
                                               "transfer_errors", "throughput_gbps", "end_to_end_us", "setup_us",
                                               "latency_us_p50",  "latency_us_p99",  "smmu_faults"};
    return keys;
}

const MetricRegistry& summary_metrics() {
    static const MetricRegistry reg = build_summary_metrics();
    return reg;
}

namespace {

double peak_rss_mib() {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0;   // ru_maxrss is in KiB on Linux
}

// AnonHugePages of /proc/self/smaps_rollup, "" where there is none.
std::string huge_pages_mib() {
    std::ifstream f("/proc/self/smaps_rollup");
    for (std::string line; std::getline(f, line);) {
        if (line.rfind("AnonHugePages:", 0) != 0) continue;
        std::istringstream in(line.substr(14));
        double kib = 0;
        if (in >> kib) return format_metric(kib / 1024.0, 4);
    }
    return "";
}

}   // namespace

namespace {

const Counter& counter_of(const StatRegistry& stats, const std::string& name) {
    const Counter* c = stats.find_counter(name);
    if (!c) throw std::logic_error("statistic " + name + " missing");
    return *c;
}

const Histogram& histogram_of(const StatRegistry& stats, const std::string& name) {
    const Histogram* h = stats.find_histogram(name);
    if (!h) throw std::logic_error("statistic " + name + " missing");
    return *h;
}

// What the summary says of one job, read from `stats` (the whole run's or
// a region's) under the job's prefix, over [begin, end] (its span).
struct JobFigures {
    std::uint64_t transfers = 0, errors = 0, bytes = 0, verified = 0, mismatches = 0;
    // What the throughput counts: the whole run's, the bytes of the
    // transfers that succeeded; a region's, the bytes that came in inside
    // it (a transfer that straddles an end counts for its part inside).
    double moved = 0;
    const Histogram* latency = nullptr;
    // A region has no throughput over no time (its transfers finished at
    // the instant it began): NaN, an empty cell; a run with nothing done, 0.
    bool region = false;
    double gbps(sc_core::sc_time begin, sc_core::sc_time end) const {
        const double s = end > begin && begin != sc_core::sc_max_time() ? (end - begin).to_seconds() : 0.0;
        if (s <= 0 && region) return std::numeric_limits<double>::quiet_NaN();
        return s > 0 ? moved * 8.0 / s / 1e9 : 0.0;
    }
};

// What came in for a job over a region of interest (its statistics):
// the payload its processes' engines accepted on every node (its
// protection domain's) and its CPU copies, each byte by the time it came
// in, so that no region can show more than the links (and copies) carried
// in it. A transfer's bytes counted whole at its completion would put
// bytes that crossed before the region into it.
double region_payload(const StatRegistry& region, const Workload& w) {
    const Scalar* local = region.find_scalar(Workload::stats_prefix(w.job()) + "local_payload_in");
    if (!local) throw std::logic_error("statistic local_payload_in missing");
    return region.sum_scalars("payload_in_pd" + std::to_string(Node::domain_of_job(w.job()))) + local->value();
}

JobFigures job_figures(const StatRegistry& stats, const Workload& w, bool region) {
    const std::string p = Workload::stats_prefix(w.job());
    JobFigures f;
    f.transfers = counter_of(stats, p + "transfers").value();
    f.errors = counter_of(stats, p + "transfer_errors").value();
    f.bytes = counter_of(stats, p + "bytes_delivered").value();
    f.verified = counter_of(stats, p + "bytes_verified").value();
    f.mismatches = counter_of(stats, p + "data_mismatches").value();
    f.latency = &histogram_of(stats, p + "latency");
    f.moved = region ? region_payload(stats, w) : static_cast<double>(f.bytes);
    f.region = region;
    return f;
}

}   // namespace

namespace {

using Columns = std::vector<std::pair<std::string, std::string>>;

// The spans the figures are taken over: the whole run's are each job's own
// (first action, first post, last completion); a region's are the
// region's, for every job.
struct Spans {
    const RegionOfInterest* region;
    sc_core::sc_time r_begin, r_end;
    explicit Spans(const RegionOfInterest* r)
        : region(r),
          r_begin(r ? r->span_begin() : sc_core::SC_ZERO_TIME),
          r_end(r ? r->span_end() : sc_core::SC_ZERO_TIME) {}
    sc_core::sc_time e2e_begin(const TransferLog& l) const { return region ? r_begin : l.first_action; }
    sc_core::sc_time e2e_end(const TransferLog& l) const { return region ? r_end : l.last_done; }
};

// The run, its region and job 0's transfers.
void add_transfer_columns(const Config& cfg, System& sys, const JobFigures& job0, const Spans& sp, double sim_s,
                          double host_seconds, Columns& v) {
    const TransferLog& log = sys.workload().log();
    const sc_core::sc_time start = sp.region                                    ? sp.r_begin
                                   : log.first_action == sc_core::sc_max_time() ? sc_core::SC_ZERO_TIME
                                                                                : log.first_action;
    v.emplace_back("workload", sys.workload().kind());
    v.emplace_back("strategy", cfg.text(params_of<StrategyParams>().strategy));
    v.emplace_back("nodes", std::to_string(sys.size()));
    v.emplace_back("sim_seconds", format_metric(sim_s, 9));
    v.emplace_back("host_seconds", format_metric(host_seconds, 4));
    v.emplace_back("region_start_us", format_metric(start.to_seconds() * 1e6, 9));
    // (A run in which nothing completed ends where it began: an empty span,
    // not one that runs backwards.)
    const sc_core::sc_time end = std::max(start, sp.region ? sp.r_end : log.last_done);
    v.emplace_back("region_end_us", format_metric(end.to_seconds() * 1e6, 9));
    v.emplace_back("transfers", std::to_string(job0.transfers));
    v.emplace_back("transfer_errors", std::to_string(job0.errors));
    v.emplace_back("bytes_delivered", std::to_string(job0.bytes));
    v.emplace_back("bytes_verified", std::to_string(job0.verified));
    v.emplace_back("data_mismatches", std::to_string(job0.mismatches));
}

// Job 0's throughput over its end-to-end span and its post window, the
// span, the setup before the first post. A region has no post window and
// no setup of its own: it begins wherever its warm-up left the transfers.
void add_throughput_columns(const TransferLog& log, const JobFigures& job0, const Spans& sp, Columns& v) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double e2e_s = sp.e2e_end(log) > sp.e2e_begin(log) && sp.e2e_begin(log) != sc_core::sc_max_time()
                             ? (sp.e2e_end(log) - sp.e2e_begin(log)).to_seconds()
                             : 0.0;
    v.emplace_back("throughput_gbps", format_metric(job0.gbps(sp.e2e_begin(log), sp.e2e_end(log))));
    v.emplace_back("post_window_throughput_gbps",
                   format_metric(sp.region ? nan : job0.gbps(log.first_post, log.last_done)));
    v.emplace_back("end_to_end_us", format_metric(e2e_s * 1e6));
    const bool setup = log.first_post != sc_core::sc_max_time() && log.first_action != sc_core::sc_max_time() &&
                       log.first_post > log.first_action;
    v.emplace_back("setup_us", format_metric(sp.region ? nan
                                             : setup   ? (log.first_post - log.first_action).to_seconds() * 1e6
                                                       : 0.0));
}

// Every job's throughput (node.processes); returns the span of them all
// (the links carried every job's packets) and every job's bytes.
void add_job_columns(System& sys, const StatRegistry& stats, const Spans& sp, sc_core::sc_time& first,
                     sc_core::sc_time& last, double& all_bytes, Columns& v) {
    std::string by_job;
    std::uint64_t errors = 0;
    for (const auto& w : sys.workloads()) {
        const TransferLog& l = w->log();
        errors += l.errors.value();
        const JobFigures f = job_figures(stats, *w, sp.region != nullptr);
        all_bytes += static_cast<double>(f.bytes);
        if (!by_job.empty()) by_job += ";";
        by_job += std::to_string(w->job()) + ":" + format_metric(f.gbps(sp.e2e_begin(l), sp.e2e_end(l)));
        if (!sp.region) {
            first = std::min(first, l.first_post);
            last = std::max(last, l.last_done);
        }
    }
    v.emplace_back("job_throughput_gbps", by_job);
    v.emplace_back("jobs_bytes_delivered", std::to_string(static_cast<std::uint64_t>(all_bytes)));
    v.emplace_back("jobs_transfer_errors", std::to_string(errors));
}

// Job 0's latency; no sample, no figure: an empty cell, not a latency of 0
// us. Then the median latency by hop count ("1:2.1;2:3.0").
void add_latency_columns(const TransferLog& log, const StatRegistry& stats, const JobFigures& job0, Columns& v) {
    const Histogram& lat = *job0.latency;
    const bool sampled = lat.count() > 0;
    v.emplace_back("latency_us_mean", sampled ? format_metric(lat.mean()) : "");
    v.emplace_back("latency_us_p50", sampled ? format_metric(lat.quantile(0.5)) : "");
    v.emplace_back("latency_us_p99", sampled ? format_metric(lat.quantile(0.99)) : "");
    std::string by_hops;
    for (const auto& kv : log.latency_by_hops()) {
        const Histogram& h = histogram_of(stats, kv.second->info.name.str());
        if (h.count() == 0) continue;
        if (!by_hops.empty()) by_hops += ";";
        by_hops += std::to_string(kv.first) + ":" + format_metric(h.quantile(0.5), 4);
    }
    v.emplace_back("latency_us_p50_by_hops", by_hops);
}

// The links between routers (not the NI links): the busiest one's busy
// time over the workload's span (first post to last completion), the mean
// over all of them, and the busiest one's name; the packet-hops.
void add_link_columns(System& sys, const StatRegistry& stats, sc_core::sc_time first, sc_core::sc_time last,
                      Columns& v) {
    double busy_max = 0, busy_sum = 0;
    std::string busiest;
    std::uint64_t packet_hops = 0;
    // By name: a partitioned run's rank holds the statistics of every link
    // (merged), not every link.
    for (std::size_t i = 0; i < sys.links().size(); ++i) {
        const std::string& n = sys.link_name(i);
        packet_hops += counter_of(stats, n + ".packets").value();
        const Scalar* busy = stats.find_scalar(n + ".busy_time");
        if (!busy) throw std::logic_error("statistic " + n + ".busy_time missing");
        const double b = busy->value();
        busy_sum += b;
        if (busiest.empty() || b > busy_max) {
            busy_max = b;
            busiest = n;
        }
    }
    const double span_us = last > first && first != sc_core::sc_max_time() ? (last - first).to_seconds() * 1e6 : 0.0;
    const double n_links = static_cast<double>(sys.links().size());
    v.emplace_back("link_util_max", format_metric(span_us > 0 ? busy_max / span_us : 0.0));
    v.emplace_back("link_util_mean", format_metric(span_us > 0 && n_links > 0 ? busy_sum / n_links / span_us : 0.0));
    v.emplace_back("busiest_link", busiest);
    v.emplace_back("packet_hops", std::to_string(packet_hops));
}

}   // namespace

std::vector<std::pair<std::string, std::string>> make_summary(const Config& cfg, System& sys, const StatRegistry& stats,
                                                              double host_seconds, double build_seconds,
                                                              const RegionOfInterest* region) {
    const TransferLog& log = sys.workload().log();
    const JobFigures job0 = job_figures(stats, sys.workload(), region != nullptr);
    const double sim_s = sc_core::sc_time_stamp().to_seconds();
    const Spans sp(region);
    Columns v;
    add_transfer_columns(cfg, sys, job0, sp, sim_s, host_seconds, v);
    add_throughput_columns(log, job0, sp, v);
    sc_core::sc_time first = region ? sp.r_begin : log.first_post, last = region ? sp.r_end : log.last_done;
    double all_bytes = 0;   // every job's, for the energy per byte
    add_job_columns(sys, stats, sp, first, last, all_bytes, v);
    add_latency_columns(log, stats, job0, v);
    add_link_columns(sys, stats, first, last, v);
    // The whole system's energy (over the region's statistics' time with a
    // region), per byte every job delivered.
    const double energy_s = region ? region->stats_seconds() : sim_s;
    for (auto& kv : energy_columns(energy_of(cfg, sys, stats, energy_s), all_bytes)) v.push_back(std::move(kv));
    v.emplace_back("peak_rss_mib", format_metric(peak_rss_mib(), 4));
    v.emplace_back("host_huge_pages_mib", huge_pages_mib());
    v.emplace_back("host_build_seconds", format_metric(build_seconds, 4));
    v.emplace_back("host_output_seconds", "");   // set when the outputs are written (run.cpp)
    // A partitioned run's (run.cpp sets them there).
    v.emplace_back("ranks", "1");
    v.emplace_back("host_windows", "0");
    v.emplace_back("host_exchanged_bytes", "0");
    v.emplace_back("host_peak_rss_mib_max", format_metric(peak_rss_mib(), 4));
    return summary_metrics().compute(MetricInputs{cfg, stats}, v);
}

}   // namespace vrdmasim
