// VmDaemons: the kernel threads that call the Vm's background work in
// simulated time: kswapd (reclaim to the high watermark when free memory is
// below the low one), khugepaged (a collapse pass every scan-sleep; alloc-sleep
// after a failed huge-page allocation) and kcompactd (a compaction run every
// vm.compact-interval; 0 = off, and then no thread at all; each run's migration window open in simulated
// time: compact_begin, then compact_end at its install time), and the I/O
// completion of reads in flight (Vm::complete_io at each read's completion
// time: a swapped-in or file page mapped then, not before; it drains the
// reads still in flight after stop()). Each is an SC_METHOD (no stack of its
// own: a large torus has thousands of them) that does what the kernel
// thread's loop does, its waits turned into next triggers; the work itself runs on
// CpuCores as activity "kswapd" / "khugepaged" / "kcompactd" (charged by the
// Vm) and the thread waits until the work's end before going on.
//
// Parameters are declared by Vm::declare_params (vm.kswapd-interval,
// vm.compact-interval, vm.compact-pages, khugepaged.scan-sleep,
// khugepaged.alloc-sleep). Every wait is timed and also ends on stop(), so
// after stop() the threads exit at once and sc_start() returns by starvation
// once the rest of the model is idle: the runner calls stop() when the
// workload is done.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "src/core/lazy_event.hpp"
#include "src/core/context.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

class VmDaemons : public sc_core::sc_module {
public:
    // Binds the Vm's low-memory callback to kswapd's wake-up. Statistics under
    // `<prefix>.` ("node0.vmd"): kswapd_runs, khugepaged_runs, kcompactd_runs.
    VmDaemons(sc_core::sc_module_name name, const SimContext& ctx, const std::string& prefix, Vm& vm);

    // The threads exit at their next wake-up (now: their waits also end on stop).
    void stop();
    bool stopped() const { return stopped_; }
    // Notified when all its threads have exited.
    sc_core::sc_event& idle() { return idle_.get(); }

private:
    void kswapd();
    void khugepaged();
    void kcompactd();
    void io_completion();
    void io_wake();
    void exited();
    // khugepaged's pass from `now`: true when it waits for a collapse window.
    bool collapse_next(sc_core::sc_time now);
    void kswapd_wake();

    Vm& vm_;
    sc_core::sc_time kswapd_interval_, scan_sleep_, alloc_sleep_, compact_interval_;
    std::uint64_t compact_pages_;
    bool stopped_ = false;
    unsigned running_ = 3;   // threads not exited yet (kcompactd adds one when it exists)
    sc_core::sc_event stop_ev_, wake_ev_, io_ev_;
    LazyEvent idle_;   // made when first waited for or notified
    // Where each daemon resumes: started, asleep, waiting for the end of its
    // work (khugepaged: a collapse window; Resting: the pass's last work).
    enum class Step { Start, Sleeping, Working, Resting };
    Step kswapd_step_ = Step::Start, khugepaged_step_ = Step::Start, kcompactd_step_ = Step::Start;
    sc_core::sc_time khugepaged_sleep_;
    // noise.daemon-phase: the fraction of its period each daemon's first
    // sleep lasts (1: a whole period, the default).
    double khugepaged_phase_ = 1, kcompactd_phase_ = 1;
    VmResult khugepaged_last_;
    Counter *kswapd_runs_, *khugepaged_runs_, *kcompactd_runs_;
};

}   // namespace vrdmasim
