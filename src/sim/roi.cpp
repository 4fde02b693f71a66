#define SC_INCLUDE_DYNAMIC_PROCESSES   // sc_spawn
#include "src/sim/roi.hpp"

#include <algorithm>

#include "src/core/stats.hpp"
#include "src/sim/system.hpp"

namespace vrdmasim {

using sc_core::sc_time;

RoiParams::RoiParams()
    : set("roi", "region of interest: the part of the run summary.csv describes (src/sim/roi.hpp)"),
      warmup_transfers(set.integer("warmup-transfers", "0",
                                   "transfers (every job's) that finish before the region of interest begins: a "
                                   "warm-up left out of summary.csv, which then describes the region only "
                                   "(whole-run-summary.csv has the whole run); 0: the region begins with the run")
                           .range("0", "1000000000000")),
      transfers(set.integer("transfers", "0",
                            "transfers that finish in the region of interest, after which it ends (what follows is "
                            "left out of summary.csv); 0: the region runs to the end of the run")
                    .range("0", "1000000000000")) {}

void RoiParams::declare_params(ParamRegistry& reg) { reg.add(params_of<RoiParams>().set); }

bool RoiParams::on(const Config& c) {
    const RoiParams& p = params_of<RoiParams>();
    return c[p.warmup_transfers] > 0 || c[p.transfers] > 0;
}

RegionOfInterest::RegionOfInterest(System& sys, StatRegistry& stats)
    : sys_(sys),
      stats_(stats),
      warmup_(static_cast<std::uint64_t>(sys.config()[params_of<RoiParams>().warmup_transfers])),
      length_(static_cast<std::uint64_t>(sys.config()[params_of<RoiParams>().transfers])) {
    // Before anything runs: the Spreads keep what the region's ends will read.
    stats.will_read();
    // Workloads that know how many transfers they will finish: a region
    // beyond them is a configuration that can never be met.
    std::uint64_t planned = 0;
    for (const auto& w : sys.workloads()) {
        const std::uint64_t n = w->planned_transfers();
        if (n == 0) return;   // one that does not know: checked at the end instead
        planned += n;
    }
    const RoiParams& p = params_of<RoiParams>();
    if (length_ == 0 && warmup_ >= planned)
        throw sys.config().refuse(p.warmup_transfers.name(),
                                  "leaves no transfer for the region of interest: the workload finishes " +
                                      std::to_string(planned) +
                                      " (the region would be empty, its figures zeros that mean nothing)");
    if (warmup_ + length_ > planned)
        throw sys.config().refuse(length_ > 0 ? p.transfers.name() : p.warmup_transfers.name(),
                                  "the region of interest needs " + std::to_string(warmup_ + length_) +
                                      " transfers to finish (roi.warmup-transfers + roi.transfers), but the "
                                      "workload finishes " +
                                      std::to_string(planned));
}

void RegionOfInterest::start() {
    for (const auto& w : sys_.workloads()) w->log().observe([this](sc_time at) { transfer_done(at); });
    if (warmup_ == 0) {
        known_[0] = true;
        at_[0] = sc_core::sc_time_stamp();
        stats_begin_ = at_[0];
        stats_.begin_window(sc_core::sc_time_stamp().value());
    }
    sc_core::sc_spawn_options opts;
    sc_core::sc_spawn([this] { run(); }, "roi", &opts);
}

void RegionOfInterest::transfer_done(sc_time at) {
    ++finished_;
    int k = -1;
    if (warmup_ > 0 && finished_ == warmup_) k = 0;
    else if (length_ > 0 && finished_ == warmup_ + length_) k = 1;
    if (k < 0) return;
    known_[k] = true;
    at_[k] = at;
    known_event_.notify(sc_core::SC_ZERO_TIME);
}

void RegionOfInterest::run() {
    // The statistics are read when the simulation reaches each end's time
    // (a transfer's completion is noted at the application's local time,
    // at or after the kernel's).
    for (int k = stats_.window_begun() ? 1 : 0; k < 2; ++k) {
        while (!known_[k]) sc_core::wait(known_event_);
        const sc_time now = sc_core::sc_time_stamp();
        if (at_[k] > now) sc_core::wait(at_[k] - now);
        if (k == 0) {
            stats_begin_ = sc_core::sc_time_stamp();
            stats_.begin_window(sc_core::sc_time_stamp().value());
        } else {
            stats_end_ = sc_core::sc_time_stamp();
            stats_.end_window(sc_core::sc_time_stamp().value());
        }
    }
}

void RegionOfInterest::finish() {
    if (stats_.window_begun() && !stats_.window_ended() && length_ == 0) {
        stats_end_ = sc_core::sc_time_stamp();
        stats_.end_window(sc_core::sc_time_stamp().value());
    }
}

std::string RegionOfInterest::incomplete() const {
    const std::string done = std::to_string(finished_) + " transfer(s) finished";
    if (!stats_.window_begun())
        return "the region of interest never began: roi.warmup-transfers = " + std::to_string(warmup_) + ", but " +
               done;
    if (!stats_.window_ended())
        return "the region of interest never ended: it needs " + std::to_string(warmup_ + length_) +
               " transfers (roi.warmup-transfers + roi.transfers), but " + done;
    if (finished_ <= warmup_)
        return "the region of interest holds no transfer: roi.warmup-transfers = " + std::to_string(warmup_) + " and " +
               done + " (its figures would be zeros that mean nothing)";
    return "";
}

sc_time RegionOfInterest::span_begin() const {
    if (warmup_ > 0) return at_[0];
    sc_time first = sc_core::sc_max_time();
    for (const auto& w : sys_.workloads()) first = std::min(first, w->log().first_action);
    return first;
}

sc_time RegionOfInterest::span_end() const {
    if (length_ > 0) return at_[1];
    sc_time last = sc_core::SC_ZERO_TIME;
    for (const auto& w : sys_.workloads()) last = std::max(last, w->log().last_done);
    return last;
}

}   // namespace vrdmasim
