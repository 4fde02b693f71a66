// Progress of a long `vrdmasim run` on a terminal: simulated time reached,
// transfers done (of how many, when the workload knows), host time, and an
// ETA when the total is known; one line on stderr rewritten in place ('\r')
// at most four times a second, cleared at the end.
//
// It must not perturb the simulation: it adds no SystemC process or event.
// The run is simulated in slices (sc_start(dt) one after the other, which
// SystemC runs exactly as one sc_start to the end: the same events in the
// same order, the same final time), and the line is drawn between slices.
// The slices are sized from the host time they take (about 0.1 s each), so
// the cost is a few sc_start calls per second. Without a terminal (or with
// --no-progress, --quiet) the run is one sc_start as before and nothing is
// printed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include <systemc>

namespace vrdmasim {

class RunProgress {
public:
    struct Counts {
        std::uint64_t done = 0;   // transfers finished (every job)
        std::uint64_t total = 0;   // transfers the workloads will do; 0: unknown
    };
    // `counts` is read between slices only. `limit`: sim.time-limit.
    RunProgress(std::ostream& os, std::function<Counts()> counts, sc_core::sc_time limit);

    // True when a progress line may be shown: stderr is a terminal and
    // neither --no-progress nor --quiet was given.
    static bool wanted(bool no_progress, bool quiet);

    // sc_start(limit, SC_EXIT_ON_STARVATION), in slices, drawing the line
    // between them; clears it before returning (also when the simulation
    // throws). Returns the number of slices (for the tests).
    std::uint64_t simulate();

    // The line shown for these figures (no '\r'): for the tests.
    static std::string line(double sim_seconds, const Counts& c, double host_seconds, double limit_seconds);

private:
    void draw(bool force);
    void clear();

    std::ostream& os_;
    std::function<Counts()> counts_;
    sc_core::sc_time limit_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    std::size_t shown_ = 0;   // characters of the line on screen, 0: none
};

}   // namespace vrdmasim
