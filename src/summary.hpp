// The summary of a run (summary.csv): the run-level metrics, declared here
// (the workload's span and latencies, the network's links, the host), and
// every model's own, each declared by its model next to the statistics it
// is computed from (Smmu500::declare_metrics, Vm::declare_metrics, ...).
// `vrdmasim metrics --markdown` prints the table as docs/metrics.md, which a
// test keeps equal to the committed file.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "src/core/metrics.hpp"

namespace vrdmasim {

class RegionOfInterest;
class System;

// Every summary metric, in the order summary.csv has them (built on first use).
const MetricRegistry& summary_metrics();

// One row: the value of every metric, of the whole run, or with `region`
// of that region alone (`stats` then its statistics: StatRegistry::window()). Every value is built from statistics
// that must exist: a missing one (a renamed or unregistered statistic) is a
// std::logic_error, never a 0. `host_output_seconds` is known only when the
// outputs are written: the caller sets it then (its value here is empty).
std::vector<std::pair<std::string, std::string>> make_summary(const Config& cfg, System& sys, const StatRegistry& stats,
                                                              double host_seconds, double build_seconds,
                                                              const RegionOfInterest* region = nullptr);

// The figures a reader looks for first, in this order (the report's cards,
// the terminal's first lines): shown whatever their value.
const std::vector<std::string>& headline_metrics();
// A figure that says the run did not use what it measures: "0". (An empty
// figure, one with no sample, is not 0: it says so.)
inline bool zero_figure(const std::string& value) { return value == "0"; }

}   // namespace vrdmasim
