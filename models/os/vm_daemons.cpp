#include "models/os/vm_daemons.hpp"

#include "models/os/vm_params.hpp"
#include "src/core/sim_params.hpp"
#include "models/common/noise.hpp"

namespace vrdmasim {

using sc_core::sc_time;

VmDaemons::VmDaemons(sc_core::sc_module_name name, const SimContext& ctx, const std::string& prefix, Vm& vm)
    : sc_module(name),
      vm_(vm),
      kswapd_interval_(ctx.config[params_of<VmParams>().kswapd_interval]),
      scan_sleep_(ctx.config[params_of<KhugepagedParams>().scan_sleep]),
      alloc_sleep_(ctx.config[params_of<KhugepagedParams>().alloc_sleep]),
      compact_interval_(ctx.config[params_of<VmParams>().compact_interval]),
      compact_pages_(static_cast<std::uint64_t>(ctx.config[params_of<VmParams>().compact_pages])),
      kswapd_runs_(&ctx.stats.counter(prefix + ".kswapd_runs", "", "kswapd reclaim runs")),
      khugepaged_runs_(&ctx.stats.counter(prefix + ".khugepaged_runs", "", "khugepaged scan passes")),
      kcompactd_runs_(&ctx.stats.counter(prefix + ".kcompactd_runs", "", "background compaction runs")) {
    khugepaged_sleep_ = scan_sleep_;
    if (ctx.config[params_of<NoiseParams>().daemon_phase]) {
        NoiseStream phase(static_cast<std::uint64_t>(ctx.config[params_of<SimParams>().seed]), "daemon-phase:" + prefix,
                          0);
        khugepaged_phase_ = phase.uniform();
        kcompactd_phase_ = phase.uniform();
    }
    vm_.set_low_memory([this] { kswapd_wake(); });
    vm_.set_io_wake([this](sc_time) { io_wake(); });
    SC_HAS_PROCESS(VmDaemons);
    SC_METHOD(kswapd);
    SC_METHOD(khugepaged);
    // kcompactd only when it has work (vm.compact-interval > 0; 0, the
    // default, is off).
    if (compact_interval_ > sc_core::SC_ZERO_TIME) {
        SC_METHOD(kcompactd);
        ++running_;
    }
    SC_METHOD(io_completion);
}

void VmDaemons::stop() {
    stopped_ = true;
    if (sc_core::sc_is_running()) stop_ev_.notify(sc_core::SC_ZERO_TIME);
}

void VmDaemons::kswapd_wake() {
    if (!stopped_ && sc_core::sc_is_running()) wake_ev_.notify(sc_core::SC_ZERO_TIME);
}

void VmDaemons::io_wake() {
    if (sc_core::sc_is_running()) io_ev_.notify(sc_core::SC_ZERO_TIME);
}

void VmDaemons::exited() {
    if (--running_ == 0) idle_.notify(sc_core::SC_ZERO_TIME);
}

// Each daemon is an SC_METHOD that does what a kernel thread's loop would:
// where the thread would wait (its sleep, or the end of work it started), the
// method sets its next trigger and returns; `step` says where it resumes.
// After exited() it sets none and never runs again.

void VmDaemons::kswapd() {
    const sc_time now = sc_core::sc_time_stamp();
    if (kswapd_step_ == Step::Sleeping && !stopped_ && vm_.free_bytes() < vm_.low_watermark()) {
        kswapd_runs_->inc();
        const VmResult r = vm_.reclaim(vm_.high_watermark(), now);
        if (r.done > now) {
            kswapd_step_ = Step::Working;
            sc_core::next_trigger(r.done - now);
            return;
        }
    }
    // Started, woken with nothing to do, or the reclaim is over: sleep.
    if (stopped_) return exited();
    kswapd_step_ = Step::Sleeping;
    sc_core::next_trigger(kswapd_interval_, wake_ev_ | stop_ev_);
}

void VmDaemons::khugepaged() {
    const sc_time now = sc_core::sc_time_stamp();
    switch (khugepaged_step_) {
    case Step::Start: break;
    case Step::Sleeping:
        if (stopped_) return exited();
        khugepaged_runs_->inc();
        if (collapse_next(now)) return;
        break;
    case Step::Working:   // a collapse window ended: install its block, then the next
        vm_.collapse_end(now);
        if (collapse_next(now)) return;
        break;
    case Step::Resting:   // the pass's last work is done
        break;
    }
    if (khugepaged_step_ != Step::Start)
        khugepaged_sleep_ = khugepaged_last_.error == VmError::NoMemory ? alloc_sleep_ : scan_sleep_;
    if (stopped_) return exited();
    // The first sleep may begin mid-period (noise.daemon-phase).
    const sc_time sleep = khugepaged_step_ == Step::Start ? khugepaged_sleep_ * khugepaged_phase_ : khugepaged_sleep_;
    khugepaged_step_ = Step::Sleeping;
    sc_core::next_trigger(sleep, stop_ev_);
}

bool VmDaemons::collapse_next(sc_time now) {
    // The pass, one collapse at a time: phase 1 now, the block installed at
    // the end of its window (waited out even if stop() comes meanwhile).
    for (;;) {
        khugepaged_last_ = vm_.collapse_begin(now);
        if (!vm_.collapsing().open) break;
        if (khugepaged_last_.done > now) {
            khugepaged_step_ = Step::Working;
            sc_core::next_trigger(khugepaged_last_.done - now);
            return true;
        }
        vm_.collapse_end(now);
    }
    if (khugepaged_last_.done > now) {
        khugepaged_step_ = Step::Resting;
        sc_core::next_trigger(khugepaged_last_.done - now);
        return true;
    }
    return false;
}

void VmDaemons::kcompactd() {
    const sc_time now = sc_core::sc_time_stamp();
    if (kcompactd_step_ == Step::Sleeping) {
        if (stopped_) return exited();
        kcompactd_runs_->inc();
        // Phase 1 now; the pages remapped at the end of the migration window
        // (waited out even if stop() comes meanwhile).
        const VmResult r = vm_.compact_begin(compact_pages_, now);
        if (r.done > now) {
            kcompactd_step_ = Step::Working;
            sc_core::next_trigger(r.done - now);
            return;
        }
    }
    if (kcompactd_step_ != Step::Start && vm_.migrating().open) vm_.compact_end(now);
    if (stopped_) return exited();
    const sc_time sleep = kcompactd_step_ == Step::Start ? compact_interval_ * kcompactd_phase_ : compact_interval_;
    kcompactd_step_ = Step::Sleeping;
    sc_core::next_trigger(sleep, stop_ev_);
}

void VmDaemons::io_completion() {
    // The bio completions: each read in flight completes at its time, when
    // its page is mapped (Vm::complete_io). A new read wakes it (its
    // completion may come before the one waited for).
    for (;;) {
        const sc_time next = vm_.next_io(), now = sc_core::sc_time_stamp();
        if (next == sc_core::sc_max_time()) {
            if (stopped_) return exited();   // nothing in flight: done
            sc_core::next_trigger(io_ev_ | stop_ev_);
            return;
        }
        if (next > now) {
            sc_core::next_trigger(next - now, io_ev_);
            return;
        }
        vm_.complete_io(now);
    }
}

}   // namespace vrdmasim
