// The host OS side of the NetVM network interface (ni.translation = shadow;
// models/dma/README.md "NetVM's network interface", models/os/README.md
// "Shadow page table"): the kernel keeps the NI's shadow page table
// (models/common/shadow_table.hpp) up to date and serves the NI's misses.
//
// - Every leaf the Vm makes present (fault-in, populate, swap-in, THP
//   collapse or split, migration's new frame) is written into the table
//   (Vm::set_map_notifier); every range the Vm unmaps, swaps out, migrates
//   or reprotects is cleared from it first (an MMU notifier,
//   Vm::set_invalidate). Each entry written or cleared costs ni.shadow-update
//   of CPU time on the node's cores (activity "ni-shadow-update"): a PIO
//   write of the entry to the NI.
// - A miss (the NI found no entry) is an interrupt: the kernel's handler
//   (smmu-driver.irq-entry, the same GIC exception path, then
//   ni.miss-handler) makes the pages present (fault-lib.policy and
//   ahead-pages, as the SMMU path's library does, but in the kernel: no
//   Netlink, no user-space wake-up), which writes their entries, and then
//   tells the engine the outcome (Pldma::fault_resolved).
// - The Vm asks the NI's page locks before it replaces a page
//   (Vm::set_page_lock): reclaim and migration skip a locked page.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <utility>
#include <string>

#include <systemc>

#include "src/core/context.hpp"
#include "src/core/metrics.hpp"
#include "src/core/params.hpp"
#include "models/common/shadow_table.hpp"
#include "models/os/cpu.hpp"
#include "models/os/vm.hpp"
#include "src/core/lazy_deque.hpp"
#include "src/core/lazy_thread.hpp"

namespace vrdmasim {

// Section [ni] keys of the OS's side: read through params_of<ShadowPagerParams>().
struct ShadowPagerParams {
    ShadowPagerParams();
    ParamSet set;
    TimeParam update;
    TimeParam miss_handler;
};

// The outcome of a miss, for the engine: (stream, address, write, resolved, when).
using ShadowOutcomeFn =
    std::function<void(std::uint32_t sid, std::uint64_t va, bool write, bool resolved, sc_core::sc_time done)>;

class ShadowPager : public sc_core::sc_module {
public:
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);

    // Binds itself to `vm` as its map notifier, its first MMU notifier
    // (set_invalidate) and its page-lock check.
    ShadowPager(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, Vm& vm, CpuCores& cpu,
                ShadowTable& table);

    // The NI's miss interrupt (any thread, any time): handled by the
    // pager's thread at `at`.
    void miss(std::uint32_t sid, int pid, std::uint64_t va, bool write, sc_core::sc_time at);
    void on_outcome(ShadowOutcomeFn fn) { outcome_ = std::move(fn); }

    // The notifiers (public for the unit tests).
    sc_core::sc_time mapped(const std::vector<VmLeaf>& leaves, sc_core::sc_time at);
    sc_core::sc_time unmapped(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    // A miss's paging work from `t` (the handler done): makes the missed
    // page present (touch-ahead: fault-lib.ahead-pages from it) and writes
    // the entry of every page of that range that is mapped without one.
    // Returns when done; `ok`: the missed page is present. (Public for the
    // unit tests; the miss thread calls it.)
    sc_core::sc_time resolve(int pid, std::uint64_t va, bool write, sc_core::sc_time t, bool& ok);

private:
    struct Miss {
        std::uint32_t sid;
        int pid;
        std::uint64_t va;
        bool write;
        sc_core::sc_time at;
        Tracer::Cause story;   // what the missing packet's write follows (narrated story)
    };
    void miss_thread();
    // `n` entries written by PIO from `at`: CPU time on a core; returns when done.
    sc_core::sc_time charge(std::uint64_t n, sc_core::sc_time at, const char* what);

    const SimContext& ctx_;
    std::string group_;
    Vm& vm_;
    CpuCores& cpu_;
    ShadowTable& table_;
    sc_core::sc_time update_, handler_;
    bool ahead_;
    std::uint64_t ahead_pages_;
    LazyDeque<Miss> misses_;
    std::set<std::pair<int, std::uint64_t>> queued_;   // (pid, page) of the misses in misses_
    WakeEvent miss_ev_;
    ShadowOutcomeFn outcome_;
    Counter &updates_, &installs_, &removals_, &handled_, &unresolved_, &coalesced_, &refills_;
    Scalar& update_us_;
    Histogram& service_us_;
    std::unique_ptr<LazyThread> miss_thread_;
};

}   // namespace vrdmasim
