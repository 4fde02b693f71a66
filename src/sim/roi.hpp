// The region of interest: the part of a run its summary describes
// (gem5's warm-up and statistics reset). Section [roi]:
//
//   roi.warmup-transfers  N  the first N transfers to finish (every job's)
//                            are a warm-up: the region begins when the N-th
//                            finishes (0: with the run)
//   roi.transfers         M  the region ends when M more have finished
//                            (0: it runs to the end of the run)
//
// So a cold first pass over a stream's 16 buffers is excluded with
// warmup-transfers = 16, or studied alone with transfers = 16.
//
// With a region, summary.csv (and a sweep's results.csv) describe it, from
// the statistics of the region alone (StatRegistry::window(): counters and
// sums their growth in it, histograms its samples exactly), written as
// roi-stats.json; whole-run-summary.csv is the whole run's summary, and
// stats.json keeps the whole run's statistics, on which the run's
// self-checks run. Figures no difference can give over a part of the run
// (a peak, a gauge, a ratio a workload computes at its end: Scalar::Kind::
// Level) are empty in the region's summary and null in roi-stats.json.
//
// Timing: the region's ends are the simulated times of the transfers'
// completions as the application saw them; the statistics are read when
// the simulation reaches that time. The transfers' own figures (count,
// bytes, errors, latencies) are counted by their completion's time
// (StatRegistry::count_at), and the throughput by when each byte came in
// (Spread: the engines' payload_in_pd<domain>, the CPU copies'
// local_payload_in), whenever the process that saw them ran; other
// statistics, like a time-series sample (src/sim/timeseries.hpp), may
// include what processes running ahead have done up to sim.quantum past an
// end.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "src/core/params.hpp"

namespace vrdmasim {

class StatRegistry;
class System;

struct RoiParams {
    RoiParams();
    ParamSet set;
    IntParam warmup_transfers;
    IntParam transfers;
    static void declare_params(ParamRegistry& reg);
    // Whether the run has a region (either parameter set).
    static bool on(const Config& c);
};

class RegionOfInterest {
public:
    // Throws ConfigError when the workloads say up front that they finish
    // fewer transfers than the region needs.
    RegionOfInterest(System& sys, StatRegistry& stats);
    // Before the simulation: counts every job's transfers from now on; a
    // region without warm-up begins here.
    void start();
    // After the simulation: a region that runs to the end ends here (at
    // the simulation's end, as the whole run's statistics do).
    void finish();
    // Why the run has no complete region ("" when it has one): fewer
    // transfers finished than it needs. The run fails with this.
    std::string incomplete() const;

    // The region's span for the summary's throughput and spans: from its
    // beginning (the warm-up's last completion, or the workloads' first
    // action without warm-up) to its end (its last transfer's completion,
    // or the workloads' last one when it runs to the end). Valid once
    // finish() has run and incomplete() is empty.
    sc_core::sc_time span_begin() const;
    sc_core::sc_time span_end() const;
    // Simulated time between the statistics' two readings (the energy's
    // time base).
    double stats_seconds() const { return (stats_end_ - stats_begin_).to_seconds(); }
    std::uint64_t warmup() const { return warmup_; }
    std::uint64_t length() const { return length_; }

private:
    void transfer_done(sc_core::sc_time at);
    void run();   // the thread reading the statistics at the region's ends

    System& sys_;
    StatRegistry& stats_;
    const std::uint64_t warmup_, length_;
    std::uint64_t finished_ = 0;
    // The ends' times as the transfers gave them, once known; [0] begin, [1] end.
    bool known_[2] = {false, false};
    sc_core::sc_time at_[2];
    sc_core::sc_event known_event_;
    sc_core::sc_time stats_begin_, stats_end_;
};

}   // namespace vrdmasim
