// `vrdmasim run --report`: report.html, one self-contained page a student
// opens in a browser after a run (inline CSS and SVG, no script, nothing
// fetched): the verdict, the summary, the configuration that differs from
// the defaults, plots of the key distributions and a timeline of the first
// fault stories the models noted (Tracer::keep_story).
//
// Runner-level: it reads the summary's metric declarations, the parameter
// registry, the statistics and the kept story; the core stays free of it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "src/core/metrics.hpp"
#include "src/core/params.hpp"
#include "src/core/stats.hpp"
#include "src/core/trace.hpp"

namespace vrdmasim {

class TimeSeries;

struct ReportInputs {
    enum class Verdict {
        Success,   // exit status 0
        TransferErrors,   // exit status 3: simulated to the end, but transfers failed
        Failed   // exit status 1: no result (error.txt)
    };
    Verdict verdict = Verdict::Success;
    std::string verdict_text;   // why it failed, or which transfers failed and why
    // What the run found that is its result rather than a failure (the
    // physical-address experiment's verdict, application races), as the
    // run printed it on stderr; shown beside the verdict.
    std::string findings;
    std::string command;   // the command line as typed
    std::string out_dir;   // as given to --out
    std::string version;
    double sim_seconds = 0;
    // summary.csv's row (empty when the run has no result), and the
    // declarations of its columns (units and meanings).
    // With a region of interest (src/sim/roi.hpp): which part of the run the
    // summary describes, in words; empty for the whole run.
    std::string region;
    std::vector<std::pair<std::string, std::string>> summary;
    const MetricRegistry* metrics = nullptr;
    const Config* config = nullptr;
    const StatRegistry* stats = nullptr;
    const std::vector<Tracer::StoryStep>* story = nullptr;
    std::uint64_t story_dropped = 0;
    // The other files of the output directory, linked from the page.
    std::vector<std::string> files;
    // The run's time series (--sample-interval), drawn when given.
    const TimeSeries* timeseries = nullptr;
};

// The whole page. Throws std::logic_error if a required input is missing.
void write_report(std::ostream& os, const ReportInputs& in);

// --- The parts, for tests -------------------------------------------------

// Text for HTML: & < > " ' escaped.
std::string html_escape(const std::string& s);

// The fault timeline: the first `max_chains` stories that start at a step
// whose name or text says "fault" (with the steps that caused it and the
// steps that follow from it), each a time-ordered table whose rows link
// "after #N" to the row of their cause. Without such steps, the first
// stories noted; without any step, a sentence saying so.
std::string render_timeline(const std::vector<Tracer::StoryStep>& steps, std::uint64_t dropped,
                            std::size_t max_chains = 5);

// A distribution to plot: one histogram, or the same statistic of several
// nodes (node0.dma.transfer_latency, node1.dma.transfer_latency) merged.
struct KeyHistogram {
    std::string title;   // "node0.dma.transfer_latency" or "dma.transfer_latency (node0 + node1)"
    std::string family;   // the name without its node ("dma.transfer_latency")
    std::string statistic;   // the last name component ("transfer_latency")
    Histogram merged;
};
// The histograms with samples worth a plot, at most `max`: the transfer
// latency (engine, then workload) and the fault service time first, then
// other latencies, then by number of samples.
std::vector<KeyHistogram> key_histograms(const StatRegistry& stats, std::size_t max = 6);

// One histogram as an inline SVG bar chart (log-spaced bins when the
// samples span more than two decades), with p50 and p99 marked.
std::string render_histogram_svg(const KeyHistogram& k);

}   // namespace vrdmasim
