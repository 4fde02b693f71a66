// Summary metrics: the columns of summary.csv (and of a sweep's
// results.csv), each declared once by the component whose statistics it is
// computed from, next to those statistics, with its unit and meaning.
//
// Part of the simulator core; knows nothing about models.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "src/core/params.hpp"
#include "src/core/stats.hpp"

namespace vrdmasim {

// What a metric is computed from at the end of a run.
struct MetricInputs {
    const Config& config;
    const StatRegistry& stats;
};

struct Metric {
    std::string name;   // CSV header
    std::string unit;   // "us", "B", "Gb/s", "" (a count), "text", "fraction"
    std::string description;   // one paragraph: what it is, built from which statistics
    // The value as written in the CSV. Empty for run-level figures (the
    // workload's span, the host's time) that the runner supplies itself.
    std::function<std::string(const MetricInputs&)> value;
};

// Numbers as the summary writes them: shortest form with `digits`
// significant digits, as std::ostream writes it ("0.125", "1.5e+09"); NaN
// (no value) as an empty cell.
std::string format_metric(double v, int digits = 6);

// Every metric, in declaration order (the order of the CSV columns).
// Declaring a name twice is a programming error (std::logic_error).
class MetricRegistry {
public:
    // A metric computed from the statistics by `value`.
    void add(const std::string& name, const std::string& unit, const std::string& description,
             std::function<std::string(const MetricInputs&)> value);
    // A run-level figure the runner supplies (Metric::value empty).
    void add_supplied(const std::string& name, const std::string& unit, const std::string& description);

    // The usual aggregations over every node's statistics. The suffix is
    // matched against whole name components ("dma.parks" matches
    // "node3.dma.parks"); a suffix that matches nothing is a
    // std::logic_error when the metric is computed, never a plausible 0.
    // `present`, when given, says whether the component exists in this run
    // (its statistics are registered only then): when it returns false the
    // metric is 0 without looking.
    using Presence = std::function<bool(const Config&)>;
    void sum_counters(const std::string& name, const std::string& description, std::vector<std::string> suffixes,
                      Presence present = {});
    void sum_scalars(const std::string& name, const std::string& unit, const std::string& description,
                     const std::string& suffix, int digits = 6, Presence present = {});
    void quantile(const std::string& name, const std::string& unit, const std::string& description,
                  const std::string& histogram_suffix, double q, Presence present = {});
    // hits / (hits + misses), 0 with neither.
    void hit_rate(const std::string& name, const std::string& description, const std::string& hits_suffix,
                  const std::string& misses_suffix, Presence present = {});

    const std::vector<Metric>& all() const { return metrics_; }
    const Metric* find(const std::string& name) const;

    // One row: every metric's value, in order. `supplied` holds the values
    // of the run-level figures; a supplied figure missing from it, or a
    // value in it that is not a declared supplied figure, is a
    // std::logic_error.
    std::vector<std::pair<std::string, std::string>> compute(
        const MetricInputs& in, const std::vector<std::pair<std::string, std::string>>& supplied) const;

    // The table as Markdown (docs/metrics.md): `vrdmasim metrics --markdown`.
    void write_markdown(std::ostream& os) const;

private:
    std::vector<Metric> metrics_;
};

}   // namespace vrdmasim
