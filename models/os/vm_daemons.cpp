#include "models/os/vm_daemons.hpp"

#include "models/os/vm_params.hpp"

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
    vm_.set_low_memory([this] { kswapd_wake(); });
    vm_.set_io_wake([this](sc_time) { io_wake(); });
    SC_HAS_PROCESS(VmDaemons);
    SC_THREAD(kswapd);
    SC_THREAD(khugepaged);
    // kcompactd only when it has work (vm.compact-interval > 0; 0, the
    // default, is off): an idle thread still costs its stack and two of the
    // host's memory mappings on every node (src/thread_budget.hpp).
    if (compact_interval_ > sc_core::SC_ZERO_TIME) {
        SC_THREAD(kcompactd);
        ++running_;
    }
    SC_THREAD(io_completion);
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

void VmDaemons::kswapd() {
    while (!stopped_) {
        wait(kswapd_interval_, wake_ev_ | stop_ev_);
        if (stopped_) break;
        if (vm_.free_bytes() >= vm_.low_watermark()) continue;
        kswapd_runs_->inc();
        const VmResult r = vm_.reclaim(vm_.high_watermark(), sc_core::sc_time_stamp());
        if (r.done > sc_core::sc_time_stamp()) wait(r.done - sc_core::sc_time_stamp());
    }
    exited();
}

void VmDaemons::khugepaged() {
    sc_time sleep = scan_sleep_;
    while (!stopped_) {
        wait(sleep, stop_ev_);
        if (stopped_) break;
        khugepaged_runs_->inc();
        // The pass, one collapse at a time: phase 1 now, the block installed
        // at the end of its window (waited out even if stop() comes meanwhile).
        VmResult r;
        for (;;) {
            r = vm_.collapse_begin(sc_core::sc_time_stamp());
            if (!vm_.collapsing().open) break;
            if (r.done > sc_core::sc_time_stamp()) wait(r.done - sc_core::sc_time_stamp());
            vm_.collapse_end(sc_core::sc_time_stamp());
        }
        if (r.done > sc_core::sc_time_stamp()) wait(r.done - sc_core::sc_time_stamp());
        sleep = r.error == VmError::NoMemory ? alloc_sleep_ : scan_sleep_;
    }
    exited();
}

void VmDaemons::kcompactd() {
    while (!stopped_) {
        wait(compact_interval_, stop_ev_);
        if (stopped_) break;
        kcompactd_runs_->inc();
        // Phase 1 now; the pages remapped at the end of the migration window
        // (waited out even if stop() comes meanwhile).
        const VmResult r = vm_.compact_begin(compact_pages_, sc_core::sc_time_stamp());
        if (r.done > sc_core::sc_time_stamp()) wait(r.done - sc_core::sc_time_stamp());
        if (vm_.migrating().open) vm_.compact_end(sc_core::sc_time_stamp());
    }
    exited();
}

void VmDaemons::io_completion() {
    // The bio completions: each read in flight completes at its time, when
    // its page is mapped (Vm::complete_io). A new read wakes the thread
    // (its completion may come before the one waited for).
    for (;;) {
        const sc_time next = vm_.next_io(), now = sc_core::sc_time_stamp();
        if (next == sc_core::sc_max_time()) {
            if (stopped_) break;   // nothing in flight: done
            wait(io_ev_ | stop_ev_);
        } else if (next > now) {
            wait(next - now, io_ev_);
        } else {
            vm_.complete_io(now);
        }
    }
    exited();
}

}  // namespace vrdmasim
