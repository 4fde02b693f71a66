// CpuCores: the Cortex-A53 cores of one node, as a resource that software
// work reserves. Work of a given activity ("fault-handler", "khugepaged",
// "kswapd", "syscall", "irq", "fault-library", ...) asks for `duration` of CPU
// from time `ready`; it runs on the core that becomes free first (ties: the
// lowest-numbered core), so when all cores are busy it waits. Loosely timed:
// no thread per core, no wait(); callers get the completion time back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"
#include "models/common/noise.hpp"

namespace vrdmasim {

// The parameters of section [cpu], declared in cpu.cpp; read
// through params_of<CpuParams>().
struct CpuParams {
    CpuParams();
    ParamSet set;
    IntParam cores;
    FrequencyParam clock;
};

class CpuCores {
public:
    static void declare_params(ParamRegistry& reg);   // section "cpu": cores (4), clock (1.5GHz)
    // Its columns of summary.csv, from the statistics it registers.
    static void declare_metrics(MetricRegistry& reg);

    // Statistics under `<prefix>.` ("node0.cpu"), trace tracks "cpu0".."cpuN-1" in `group`.
    // `<prefix>.cores_busy_time` (us) is registered here and sums every
    // activity's `<prefix>.<activity>.busy_time` (those appear on an
    // activity's first run).
    CpuCores(const SimContext& ctx, const std::string& prefix, const std::string& group);

    struct Slot {
        unsigned core;
        sc_core::sc_time start, end;   // absolute
        Tracer::Cause step;   // the noted step (run with a Story), else empty
    };
    // A step of a story that a piece of work tells (Tracer::note): who, the
    // log's text, and what it follows (empty: the current Tracer::Scope).
    struct Story {
        std::string who, text;
        Tracer::Cause because;
    };
    // Run `duration` of work of `activity` no earlier than `ready` (absolute).
    // Returns where and when it ran. `label` names the trace span (defaults to
    // the activity).
    Slot run(std::string_view activity, sc_core::sc_time ready, sc_core::sc_time duration,
             const std::string& label = "");
    // The same, told as a step of a story: its slice on the core's track is
    // the noted step (an arrow from `story.because`), and its log line says
    // `story.text`. Build the Story only when ctx.tracer.noting().
    Slot run(std::string_view activity, sc_core::sc_time ready, sc_core::sc_time duration, const std::string& label,
             const Story& story);
    // Work that has run already, from `start` to `end` (absolute), booked
    // once it is over: a spin loop, whose length is known only when what it
    // waited for came. It held the core that run() would pick from when
    // that core was free (no earlier than `start`) until `end`, and never
    // beyond: while every core was busy the work was waiting for one and
    // held none. (Booked as run() books, from `start` for `end - start`, a
    // spin that found the cores busy would hold one past its own end, into
    // the future, delaying all later work of the node for time already
    // spent: with more spinners than cores the cores' backlog then grows
    // without bound.) The slot may be empty (start = end) when no core was
    // free before `end`; noise.cpu-jitter stretches it as it does any work.
    Slot ran(std::string_view activity, sc_core::sc_time start, sc_core::sc_time end, const std::string& label = "");

    unsigned cores() const { return static_cast<unsigned>(free_at_.size()); }
    double frequency_hz() const { return hz_; }
    // `cycles` at the configured clock.
    sc_core::sc_time cycles(double n) const;
    // CPU time spent per activity so far.
    sc_core::sc_time busy(std::string_view activity) const;

    // The run's warning when some node's cores served a piece of work
    // behind one that became ready after it (`<prefix>.order_inversions`):
    // its CPU waits are then not in simulated time's order alone. Empty
    // when none did.
    static std::string order_warning(const StatRegistry& stats);

    // The run ends at `end` (the last event): work booked beyond it (a
    // hog's or a daemon's, stopped with the workload while its work was
    // under way) counts only up to `end` in the busy times. Booking adds a
    // piece's whole duration at once, loosely timed; without this a run
    // would report cores busier than the time it lasted.
    void end_run(sc_core::sc_time end);

private:
    struct Activity {
        Scalar* busy_us;   // set from `busy`
        Histogram* wait_ns;
        Counter* runs;
        sc_core::sc_time busy;   // exact
    };
    // The activity of that name, registered on its first run. The one
    // found last is remembered (work comes in runs of one activity): a
    // compare of its name instead of the map's.
    Activity& activity(std::string_view name);
    // once_over: booked by ran(), after the work (no wait of its own to count).
    Slot run_on_core(std::string_view activity, sc_core::sc_time ready, sc_core::sc_time duration,
                     const std::string& label, const Story* story, bool once_over = false);
    const SimContext& ctx_;
    std::string prefix_;
    double hz_;
    double jitter_;   // noise.cpu-jitter (0: none)
    NoiseStream noise_;   // its draws, this node's own stream
    Scalar& total_busy_us_;   // `<prefix>.cores_busy_time`: every activity's CPU time
    sc_core::sc_time total_busy_;   // the same, exact (total_busy_us_ is set from it)
    std::vector<sc_core::sc_time> free_at_;
    // Per core, the pieces not over by the time of the latest booking on
    // it, in time order (a few at most): what end_run() trims.
    struct Booked {
        sc_core::sc_time start, end, ready;
        Activity* activity;
    };
    std::vector<std::vector<Booked>> ahead_;
    // run_on_core's steps: the core and start, an inversion counted, the
    // piece traced.
    void pick_core(sc_core::sc_time ready, sc_core::sc_time duration, bool once_over, unsigned& core,
                   sc_core::sc_time& start, std::size_t& at) const;
    void count_inversion(const std::vector<Booked>& ahead, std::size_t at, sc_core::sc_time ready,
                         sc_core::sc_time start);
    Tracer::Cause trace_piece(std::string_view activity_name, const std::string& label, const Story* story,
                              unsigned core, sc_core::sc_time ready, sc_core::sc_time start, sc_core::sc_time duration);
    // Per core, the end of the pieces let go (over by the kernel's time when
    // a piece was booked): no gap before it is offered. And the count of
    // pieces that waited behind work ready after them, registered at the
    // first (a run without one keeps its statistics as they were).
    std::vector<sc_core::sc_time> done_until_;
    Counter* inversions_ = nullptr;
    Scalar* inversion_wait_ = nullptr;
    std::vector<Tracer::Track> tracks_;
    std::map<std::string, Activity, std::less<>> activities_;
    const std::string* last_name_ = nullptr;   // activities_'s key of last_ (map nodes do not move)
    Activity* last_ = nullptr;
};

}   // namespace vrdmasim
