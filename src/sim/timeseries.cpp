#define SC_INCLUDE_DYNAMIC_PROCESSES   // sc_spawn
#include "src/sim/timeseries.hpp"

#include <algorithm>
#include <sstream>

#include "src/core/csv.hpp"
#include "src/core/metrics.hpp"
#include "src/core/stats.hpp"
#include "src/sim/system.hpp"
#include "src/sim/node.hpp"

namespace vrdmasim {

namespace {

// The summary's sums by counter suffix (the same suffixes its metrics name).
std::uint64_t sum_of(const StatRegistry& s, std::initializer_list<const char*> suffixes) {
    std::uint64_t n = 0;
    for (const char* x : suffixes) n += s.sum_counters(x);
    return n;
}

}   // namespace

const std::vector<TimeSeries::Column>& TimeSeries::columns() {
    static const std::vector<Column> c{
        {"time_us", "us", "simulated time of the sample (the end of its interval)"},
        {"throughput_gbps", "Gb/s",
         "payload delivered by every job's transfers in the interval, x 8, over the interval"},
        {"bytes_delivered", "B", "payload delivered so far (every job)"},
        {"transfers", "", "transfers finished so far, ok or not (every job)"},
        {"smmu_faults", "", "SMMU faults recorded so far (as the summary's smmu_faults)"},
        {"faults_major", "", "faults on swapped-out pages so far (as the summary's faults_major)"},
        {"swap_outs", "", "4 KiB pages written to swap so far"},
        {"swap_ins", "", "4 KiB pages read back from swap so far"},
        {"free_mib", "MiB", "free page frames of every node's memory, at the sample"},
        {"link_util_max", "fraction",
         "the busiest link between routers in the interval: its busy time over the interval (a packet's whole "
         "serialisation counts in the interval it starts in)"},
        {"link_util_mean", "fraction", "the mean over the links between routers of the same"},
    };
    return c;
}

TimeSeries::TimeSeries(System& sys, StatRegistry& stats, sc_core::sc_time interval)
    : sys_(sys), stats_(stats), interval_(interval) {}

TimeSeries::Totals TimeSeries::totals() const {
    Totals t;
    t.t_s = sc_core::sc_time_stamp().to_seconds();
    // The transfers that finished by now (held, with a region of interest,
    // until the kernel reaches their time: StatRegistry::count_at).
    stats_.flush_timed(sc_core::sc_time_stamp().value());
    for (const auto& w : sys_.workloads()) {
        t.bytes += w->log().bytes_delivered.value();
        t.transfers += w->log().transfers.value();
    }
    t.smmu_faults =
        sum_of(stats_, {"faults_translation", "faults_access_flag", "faults_permission", "faults_external"});
    t.faults_major = sum_of(stats_, {"faults_major"});
    t.swap_outs = sum_of(stats_, {"swap_outs"});
    t.swap_ins = sum_of(stats_, {"swap_ins"});
    for (std::size_t i = 0; i < sys_.size(); ++i) t.free_bytes += sys_.node(i).vm.free_bytes();
    return t;
}

void TimeSeries::start() {
    last_ = totals();
    link_busy_.assign(sys_.links().size(), 0.0);
    for (std::size_t i = 0; i < sys_.links().size(); ++i) link_busy_[i] = sys_.links()[i]->busy_us();
    sys_.on_all_finished([this] {
        done_ = true;
        finished_.notify(sc_core::SC_ZERO_TIME);
    });
    sc_core::sc_spawn_options opts;
    sc_core::sc_spawn([this] { run(); }, "timeseries_sampler", &opts);
}

void TimeSeries::run() {
    while (!done_) {
        // Cancelled when the workloads finish: the sampler never moves the
        // end of the simulation.
        sc_core::wait(interval_, finished_);
        sample();
        // Nothing else left to happen (a deadlock): stop, so that the run
        // still ends by starvation and says so.
        if (!done_ && !sc_core::sc_pending_activity()) break;
    }
}

void TimeSeries::sample() {
    const Totals now = totals();
    const double dt = now.t_s - last_.t_s;
    if (dt <= 0 && !rows_.empty()) return;   // the end coincides with the last sample
    double busy_max = 0, busy_sum = 0;
    for (std::size_t i = 0; i < sys_.links().size(); ++i) {
        const double b = sys_.links()[i]->busy_us();
        const double d = b - link_busy_[i];
        link_busy_[i] = b;
        busy_max = std::max(busy_max, d);
        busy_sum += d;
    }
    const double dt_us = dt * 1e6;
    const double n_links = static_cast<double>(sys_.links().size());
    rows_.push_back({format_metric(now.t_s * 1e6, 9),
                     format_metric(dt > 0 ? static_cast<double>(now.bytes - last_.bytes) * 8.0 / dt / 1e9 : 0.0),
                     std::to_string(now.bytes), std::to_string(now.transfers), std::to_string(now.smmu_faults),
                     std::to_string(now.faults_major), std::to_string(now.swap_outs), std::to_string(now.swap_ins),
                     format_metric(static_cast<double>(now.free_bytes) / (1024.0 * 1024.0)),
                     format_metric(dt_us > 0 ? busy_max / dt_us : 0.0),
                     format_metric(dt_us > 0 && n_links > 0 ? busy_sum / n_links / dt_us : 0.0)});
    last_ = now;
}

std::vector<double> TimeSeries::column(const std::string& name) const {
    std::size_t k = 0;
    while (k < columns().size() && name != columns()[k].name) ++k;
    std::vector<double> v;
    if (k == columns().size()) return v;
    for (const auto& r : rows_) v.push_back(std::stod(r[k]));
    return v;
}

void TimeSeries::write_csv(std::ostream& os) const {
    CsvRow header;
    for (const auto& c : columns()) header.push_back(c.name);
    write_csv_row(os, header);
    for (const auto& r : rows_) write_csv_row(os, r);
}

}   // namespace vrdmasim
