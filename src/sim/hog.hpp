// MemoryHog: memory pressure for experiments. A second process on a node's
// Vm that maps `hog.bytes` with MAP_POPULATE at time 0 and then keeps its
// pages hot: every pass writes every 4 KiB page with Vm::touch (a page that
// reclaim took is faulted back, from swap), a pass every `hog.interval`
// (counted from the end of the previous pass: a pass of many pages can take
// longer than the interval, at vm.user-access per present page). Because the
// hog's pages always carry a fresh access flag, reclaim's second-chance
// clock passes them over and picks the RDMA buffers, which are touched less,
// as its victims.
//
// Parameters, section "hog": bytes (0 = no hog), interval, nodes (all: every
// node; sender / receiver: only workload.src-node / workload.dst-node).
// The hog is only built for nodes whose processes live in a Vm (smmu.enabled).
// Statistics under `<prefix>.` ("node1.hog"): passes, pages_touched,
// pages_refaulted (touches that had to fault the page back in).
//
// stop() ends it at its next wake-up (the system calls it when the workload
// has finished, next to VmDaemons::stop), so that the simulation can end.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "src/core/context.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

// The parameters of section [hog], declared in hog.cpp; read
// through params_of<HogParams>().
struct HogParams {
    HogParams();
    ParamSet set;
    SizeParam bytes;
    TimeParam interval;
    EnumParam nodes;
};

class MemoryHog : public sc_core::sc_module {
public:
    static void declare_params(ParamRegistry& reg);
    // Whether node `node` gets a hog under this configuration (hog.bytes > 0
    // and hog.nodes selects it).
    static bool wanted(const Config& cfg, unsigned node);

    // `capacity`: bytes the node's Vm can hold at most (frames and swap); a
    // larger hog.bytes is a ConfigError.
    MemoryHog(sc_core::sc_module_name name, const SimContext& ctx, const std::string& prefix, Vm& vm,
              std::uint64_t capacity);

    void stop();
    bool stopped() const { return stopped_; }
    // True once the thread has returned (after stop(), or after a failed mmap).
    bool exited() const { return exited_; }
    int pid() const { return pid_; }
    std::uint64_t base() const { return base_; }
    std::uint64_t bytes() const { return bytes_; }

private:
    void run();

    Vm& vm_;
    const std::uint64_t bytes_;
    const sc_core::sc_time interval_;
    bool stopped_ = false, exited_ = false;
    int pid_ = 0;
    std::uint64_t base_ = 0;
    sc_core::sc_event stop_ev_;
    Counter *passes_, *pages_touched_, *pages_refaulted_, *mmap_failures_;
    std::string node_;   // its node's name: its turns (src/core/software_turns.hpp)
};

}   // namespace vrdmasim
