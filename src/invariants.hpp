// Run-level invariants: the physics and bookkeeping every finished run must
// satisfy, checked at the end of every `vrdmasim run` (cheap: a pass over
// the links and a few statistics). A violation means a figure of the run
// cannot be trusted: the run exits 1 naming the invariant and its numbers.
// The list, with what each one catches, is in README.md, "Self-checks".
#pragma once

#include <string>
#include <vector>

namespace vrdmasim {

class System;
class StatRegistry;

struct Violation {
    std::string invariant;   // its name, e.g. "link-utilisation"
    std::string detail;      // the numbers that break it
};

// The figures the invariants are checked on, as the summary reports them
// (so that what is checked is what is printed).
struct RunFigures {
    double span_s = 0;            // workload span: first post to last completion
    double run_s = 0;             // simulated time of the whole run
    double throughput_gbps = 0;   // payload over the span
    double link_util_max = 0;     // busiest inter-router link over the span
};

std::vector<Violation> check_invariants(System& sys, const StatRegistry& stats, const RunFigures& f);

// One line per violation, "invariant: detail".
std::string describe(const std::vector<Violation>& v);

}  // namespace vrdmasim
