// Windows: the simulation of one rank of a partitioned run, in step with
// the others (docs/scaling.md "Keeping time: conservative windows").
//
// Each window is [W, W + L) with L the board link's latency, the
// lookahead: every rank runs its kernel to W + L (not its events at W + L),
// then the ranks exchange the window's cut-link messages (CutMail) and
// what the window parties collected (the global rendezvous, the workloads'
// check steps), and one reduction gives the earliest event anywhere: the
// next window starts there, so an idle stretch costs one window. The run
// ends when no rank has an event left, or at sim.time-limit.
//
// With one rank (SelfComm) the same loop runs in one process, what it
// delivers coming from itself: the test that the loop changes nothing.
#pragma once

#include <cstdint>
#include <string>
#include <functional>
#include <vector>

#include <systemc>

#include "src/sim/parallel/comm.hpp"
#include "src/sim/parallel/cut_mail.hpp"

namespace vrdmasim {

// Something besides the cut links whose state the ranks exchange at each
// window's end: what this rank collected since the last window, and every
// rank's (by rank) to merge.
class WindowParty {
public:
    virtual Bytes take() = 0;
    virtual void merge(const std::vector<Bytes>& all) = 0;

protected:
    ~WindowParty() = default;
};

class Windows {
public:
    // `mail`: the rank's cut links (null: none on this rank). `lookahead`:
    // the window's length (> 0).
    Windows(Comm& comm, CutMail* mail, sc_core::sc_time lookahead, sc_core::sc_time limit);
    void add(WindowParty& party) { parties_.push_back(&party); }
    // Called with each window's end before the kernel runs to it.
    void before_each(std::function<void(sc_core::sc_time end)> f) { before_ = std::move(f); }

    // Simulates to the end: until no rank has an event left, or `limit`.
    // Returns "" or the error that stopped a rank's simulation (an
    // exception out of its kernel: every rank stops at that window's end,
    // and each returns the lowest failing rank's error).
    std::string run();

    // What the run did: windows, and the messages and bytes this rank sent
    // to others, and what the windows' exchanges took.
    std::uint64_t windows() const { return windows_; }
    std::uint64_t exchanged_bytes() const { return bytes_; }

private:
    Comm& comm_;
    CutMail* mail_;
    sc_core::sc_time lookahead_, limit_;
    std::vector<WindowParty*> parties_;
    std::function<void(sc_core::sc_time)> before_;
    std::uint64_t windows_ = 0, bytes_ = 0;
};

class System;
class StatRegistry;

// After the last window, on every rank: the kernels' clocks set to the last
// event anywhere (sim_seconds is the whole run's), and every rank's
// statistics, the workloads' spans (first action, first post, last
// completion) and their parts of the whole system's figures
// (Workload::end_part) merged into every rank's, so that each has the
// figures one process would have. After a failed window (`failed`: Windows::run
// returned an error, on every rank alike) the clocks stay where they
// stopped: a kernel that stopped on an error cannot be started again.
void merge_ranks(System& sys, StatRegistry& stats, Comm& comm, bool failed = false);

}   // namespace vrdmasim
