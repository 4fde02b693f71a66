// Run-level invariants: the physics and bookkeeping every finished run must
// satisfy, checked at the end of every `vrdmasim run` (cheap: a pass over
// the links and a few statistics). A violation means a figure of the run
// cannot be trusted: the run exits 1 naming the invariant and its numbers.
// The list, with what each one catches, is in docs/running.md, "Self-checks".
#pragma once

#include <string>
#include <vector>

namespace vrdmasim {

class System;
class StatRegistry;

struct Violation {
    std::string invariant;   // its name, e.g. "link-utilisation"
    std::string detail;   // the numbers that break it
};

// The figures the invariants are checked on, as the summary reports them
// (so that what is checked is what is printed).
struct RunFigures {
    double span_s = 0;   // workload span: first post to last completion (all jobs)
    double run_s = 0;   // simulated time of the whole run
    double throughput_gbps = 0;   // the headline: payload over the end-to-end span (first action on)
    double post_window_gbps = 0;   // payload over the post window (first post on)
    double link_util_max = 0;   // busiest inter-router link over the span
};

// The figures of a finished run from its workloads' logs, computed as the
// summary computes them (every job's spans: the links carried them all);
// link_util_max is left 0 (the summary's, from the links).
RunFigures run_figures(System& sys);

std::vector<Violation> check_invariants(System& sys, const StatRegistry& stats, const RunFigures& f);

// The figures of a region of interest (src/sim/roi.hpp), as its summary reports them.
struct RegionFigures {
    double begin_s = 0, end_s = 0;   // the region's span (region_start_us, region_end_us)
    double stats_s = 0;   // between its statistics' two readings
    double throughput_gbps = 0;   // its throughput_gbps
    double link_util_max = 0;   // its link_util_max
};

// The region's own checks, on its statistics (`region`, StatRegistry::
// window()) against the whole run's (`whole`): within the run, no counter
// above the run's, links and throughput within their limits over it, its
// energy at least the static power for its time.
std::vector<Violation> check_region(System& sys, const StatRegistry& whole, const StatRegistry& region,
                                    const RegionFigures& f);

// One line per violation, "invariant: detail".
std::string describe(const std::vector<Violation>& v);

}   // namespace vrdmasim
