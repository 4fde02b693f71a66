// Progress of a long `vrdmasim run` on a terminal: simulated time reached,
// transfers done (of how many, when the workload knows), host time, and an
// ETA when the total is known; one line on stderr rewritten in place ('\r')
// at most four times a second, cleared at the end.
//
// The ETA is honest about what it knows: a run's transfers need not all
// cost the same host time (under memory pressure the later ones are slower,
// a warm-up makes the first ones faster or slower), so the rate of the whole
// run so far and the rate of its recent part (estimate()) each give an
// estimate; when they agree (within 25 %) the line shows the larger one,
// otherwise the range between them ("ETA 40.1 s to 2m10s"); with fewer than
// kSureTransfers transfers done or under a tenth of them, either is marked
// "?" ("ETA 1m38s?": too little of the run has passed to tell).
//
// It must not perturb the simulation: it adds no SystemC process or event.
// The run is simulated in slices (sc_start(dt) one after the other, which
// SystemC runs exactly as one sc_start to the end: the same events in the
// same order, the same final time), and the line is drawn between slices.
// The slices are sized from the host time they take (about 0.1 s each), so
// the cost is a few sc_start calls per second. Without a terminal (or with
// --no-progress, --quiet) the run is one sc_start as before and nothing is
// printed. VRDMASIM_PROGRESS_PACE=K in the environment makes every one of
// these host times K times shorter (tests/scripts/progress_test.py: many
// updates in a short run).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <systemc>

namespace vrdmasim {

class RunProgress {
public:
    struct Counts {
        std::uint64_t done = 0;   // transfers finished (every job)
        std::uint64_t total = 0;   // transfers the workloads will do; 0: unknown
    };
    // The transfers done by a host time (seconds from the start).
    struct Sample {
        double host = 0;
        std::uint64_t done = 0;
    };
    // Host seconds left: [low, high]; `sure` false while too little of the
    // run has passed to trust either end; low < 0: no estimate.
    struct Eta {
        double low = -1, high = -1;
        bool sure = false;
    };
    static constexpr std::uint64_t kSureTransfers = 8;
    // The ETA after `samples` (in host time order, the last one now) of a
    // run of `total` transfers: the whole run's rate so far, and the recent
    // rate (over the last third of the host time, back to at least one
    // finished transfer), each times the transfers left.
    static Eta estimate(const std::vector<Sample>& samples, std::uint64_t total);
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
    static std::string line(double sim_seconds, const Counts& c, double host_seconds, double limit_seconds,
                            const Eta& eta);

private:
    void draw(bool force);
    void clear();

    std::ostream& os_;
    std::function<Counts()> counts_;
    sc_core::sc_time limit_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    double pace_;   // VRDMASIM_PROGRESS_PACE
    std::size_t shown_ = 0;   // characters of the line on screen, 0: none
    std::vector<Sample> samples_;   // one per transfer count seen (its first time), and now
};

}   // namespace vrdmasim
