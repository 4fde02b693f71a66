#include "src/sim/hog.hpp"

#include <algorithm>
#include <iostream>

#include "workloads/registry.hpp"
#include "workloads/workload.hpp"
#include "src/core/software_turns.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = 4096;
// The hog's thread catches up with its own (loosely timed) progress at least
// this often within a pass, so that reclaim and the engine see its touches
// roughly when they happen.
const sc_time kSync(10, sc_core::SC_US);
}   // namespace

HogParams::HogParams()
    : set("hog", "memory pressure: a second process that keeps hog.bytes of memory hot"),
      bytes(set.size("bytes", "0B",
                     "memory the hog maps (MAP_POPULATE) and re-writes page by page every interval; "
                     "0 = no hog. Needs processes in a Vm: smmu.enabled, or smmu.enabled = false with a registration "
                     "strategy (the physical-address experiment); ignored otherwise")
                .range("0B", "1TiB")),
      interval(set.time("interval", "1ms", "pause between the end of one re-touch pass and the start of the next")
                   .range("1ns", "100s")),
      nodes(set.choice("nodes", "all", {"all", "sender", "receiver"},
                       "which nodes get a hog: all, or only workload.src-node (sender) or workload.dst-node "
                       "(receiver); sender and receiver are refused for a workload.kind that does not read that "
                       "node's parameter (its nodes are not one sender and one receiver)")) {}

void MemoryHog::declare_params(ParamRegistry& reg) { reg.add(params_of<HogParams>().set); }

namespace {

// The node hog.nodes = sender or receiver names: the value of `param`
// (workload.src-node or workload.dst-node), where the run's kind reads it;
// a kind that does not has no such node (a halo's nodes all send and
// receive), and the parameter's value (its default, node 0 or 1) would
// place the hog where the user meant no node in particular: ConfigError.
unsigned chosen_node(const Config& cfg, const std::string& which, const IntParam& param) {
    const WorkloadKind& kind = workload_kinds::of(cfg);
    if (std::find(kind.reads.begin(), kind.reads.end(), param.name()) == kind.reads.end())
        throw cfg.refuse(params_of<HogParams>().nodes,
                         "workload.kind = " + kind.name + " (from " + cfg.origin(params_of<WorkloadParams>().kind) +
                             ") has no " + which + " node: it does not read " + param.name() +
                             " (only workload.kind = " + workload_kinds::readers(param.name()) +
                             " do); hog.nodes = all gives every node a hog");
    return static_cast<unsigned>(cfg[param]);
}

}   // namespace

bool MemoryHog::wanted(const Config& cfg, unsigned node) {
    if (cfg[params_of<HogParams>().bytes] == 0) return false;
    const std::string which = cfg.text(params_of<HogParams>().nodes);
    if (which == "sender") return node == chosen_node(cfg, which, params_of<WorkloadParams>().src_node);
    if (which == "receiver") return node == chosen_node(cfg, which, params_of<WorkloadParams>().dst_node);
    return true;
}

MemoryHog::MemoryHog(sc_core::sc_module_name name, const SimContext& ctx, const std::string& prefix, Vm& vm,
                     std::uint64_t capacity)
    : sc_module(name),
      vm_(vm),
      bytes_((ctx.config[params_of<HogParams>().bytes] + kPage - 1) / kPage * kPage),
      interval_(ctx.config[params_of<HogParams>().interval]),
      passes_(&ctx.stats.counter(prefix + ".passes", "", "re-touch passes over every hog page")),
      pages_touched_(&ctx.stats.counter(prefix + ".pages_touched", "pages", "hog pages written")),
      pages_refaulted_(&ctx.stats.counter(prefix + ".pages_refaulted", "pages",
                                          "touches that faulted: the page had been swapped out (or aged) by reclaim")),
      mmap_failures_(&ctx.stats.counter(prefix + ".mmap_failures", "", "the hog's mmap failed")) {
    if (bytes_ > capacity)
        throw ctx.config.refuse(params_of<HogParams>().bytes, "more than the node's " + std::to_string(capacity >> 20) +
                                                                  " MiB of page frames and swap");
    node_ = software_turns::node_of(prefix);
    SC_HAS_PROCESS(MemoryHog);
    SC_THREAD(run);
}

void MemoryHog::stop() {
    stopped_ = true;
    if (sc_core::sc_is_running()) stop_ev_.notify(sc_core::SC_ZERO_TIME);
}

void MemoryHog::run() {
    software_turns::enter(node_);   // a program of the node
    // One delta later than time 0: the node's application process is made
    // first (it keeps pid 1 and ASID 1).
    wait(sc_core::SC_ZERO_TIME);
    if (stopped_ || bytes_ == 0) {
        exited_ = true;
        return;
    }
    pid_ = vm_.create_process("hog");
    const VmResult m = vm_.mmap(pid_, bytes_, Prot::ReadWrite, true, sc_core::sc_time_stamp());
    if (!m.ok()) {
        mmap_failures_->inc();
        std::cerr << "vrdmasim: warning: hog mmap failed: " << name() << ": mmap of " << bytes_ << " bytes failed ("
                  << to_string(m.error) << "); no memory pressure from this hog\n";
        exited_ = true;
        return;
    }
    base_ = m.value;
    if (m.done > sc_core::sc_time_stamp()) wait(m.done - sc_core::sc_time_stamp(), stop_ev_);
    while (!stopped_) {
        wait(interval_, stop_ev_);
        if (stopped_) break;
        passes_->inc();
        sc_time t = sc_core::sc_time_stamp();
        for (std::uint64_t va = base_; va < base_ + bytes_ && !stopped_; va += kPage) {
            const VmResult r = vm_.touch(pid_, va, true, t);
            pages_touched_->inc();
            if (r.value > 0) pages_refaulted_->inc();
            if (r.done > t) t = r.done;
            if (t - sc_core::sc_time_stamp() >= kSync) wait(t - sc_core::sc_time_stamp(), stop_ev_);
        }
        if (!stopped_ && t > sc_core::sc_time_stamp()) wait(t - sc_core::sc_time_stamp(), stop_ev_);
    }
    exited_ = true;
}

}   // namespace vrdmasim
