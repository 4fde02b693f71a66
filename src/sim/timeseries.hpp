// Statistics sampled over simulated time: `vrdmasim run --sample-interval T`
// writes timeseries.csv, one row every T of simulated time and one when the
// workloads have finished (or where a failed run stopped), with the figures a researcher watches move (docs/metrics.md,
// "Time series"): throughput over the interval, transfers, SMMU and major
// faults, swap traffic, free memory, link utilisation.
//
// A sampler thread wakes every T and reads the statistics; it stops when
// every workload has finished, so a run's results (sim_seconds included)
// are the same with and without it. Causality: models run loosely timed, so
// a sample at t may include what a process running ahead has done up to
// sim.quantum past t; the interval must be at least sim.quantum (checked).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

namespace vrdmasim {

class StatRegistry;
class System;

class TimeSeries {
public:
    // The columns of timeseries.csv, each with its unit and meaning.
    struct Column {
        const char* name;
        const char* unit;
        const char* meaning;
    };
    static const std::vector<Column>& columns();

    TimeSeries(System& sys, StatRegistry& stats, sc_core::sc_time interval);
    // Spawn the sampler (before the simulation starts).
    void start();
    // After the simulation: a run whose workloads never finished (it
    // failed) gets its last row where it stopped; a finished one has it at
    // the workloads' end already (what the kernel did after is not theirs).
    void finish() {
        if (!done_) sample();
    }
    void write_csv(std::ostream& os) const;
    // Column `name`'s values, one per row (the report's plots).
    std::vector<double> column(const std::string& name) const;
    std::size_t rows() const { return rows_.size(); }

private:
    struct Totals {
        double t_s = 0;
        std::uint64_t bytes = 0, transfers = 0, smmu_faults = 0, faults_major = 0, swap_outs = 0, swap_ins = 0;
        std::uint64_t free_bytes = 0;
        double busy_max_us = 0, busy_sum_us = 0;   // inter-router links, cumulative busy time
    };
    Totals totals() const;
    void sample();
    void run();

    System& sys_;
    StatRegistry& stats_;
    const sc_core::sc_time interval_;
    sc_core::sc_event finished_;
    bool done_ = false;
    Totals last_;
    std::vector<double> link_busy_;   // each inter-router link's busy time at the last sample
    std::vector<std::vector<std::string>> rows_;
};

}   // namespace vrdmasim
