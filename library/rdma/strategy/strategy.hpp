// Registration strategies: how the RDMA user library makes a user buffer
// usable by the engine (PLDMA + SMMU) before a transfer, and gives it back
// afterwards. Each strategy declares itself in its own file of this folder
// with a static StrategyKind::Declare: its name and help (rdma.strategy's
// choices), what it implies of the rest of the machine, its metrics, and
// how to build its hooks (a RegistrationStrategy). The simulator (src/sim)
// and the workloads ask questions of the declaration and name no strategy;
// the Registrar (library/rdma/registrar.hpp) keeps what is common to them
// (the statistics, the pinned peak) and calls the hooks. The library
// vrdmasim_rdma_strategy is linked whole (CMakeLists.txt), so that a
// declaration nothing refers to is in the program.
//
// Loosely timed like Vm: hooks take the absolute time `at` and return when
// their work is done; they never wait(). See library/rdma/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/metrics.hpp"
#include "src/core/params.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

class CpuCores;

// Section [rdma]'s registration keys: rdma.strategy (its choices and help
// are the declared strategies'), and the settings of the strategies that
// read them.
struct StrategyParams {
    StrategyParams();
    ParamSet set;
    EnumParam strategy;
    IntParam pin_cache_pages;
    TimeParam pin_cache_lookup;
    SizeParam pipeline_chunk;
};

struct RegResult {
    bool ok = true;
    VmError error = VmError::Ok;
    sc_core::sc_time done;   // absolute
};

// The statistics of one process's registrations, under `prefix`
// ("node0.rdma"). Every strategy's are made whatever rdma.strategy is, so
// that a run's stats.json names the same figures for every strategy.
struct RegistrationStats {
    RegistrationStats(StatRegistry& stats, const std::string& prefix);
    Counter &registrations, &deregistrations, &hits, &misses, &evictions, &invalidations, &over_capacity, &failures,
        &background_pins, &foreground_pins;
    Scalar &registration_time, &pinned_peak, &deferred_wait, &background_time;
    // 4 KiB pages pinned so far (every pin call's pages, counted again when
    // pinned again). A plain count, not a statistic: the registrar is built
    // at each process's boot, inside the simulation loop the benchmark counts.
    std::uint64_t pages_pinned = 0;
    // The largest pinned bytes of the process seen so far.
    std::uint64_t peak = 0;
    // A registration pinned `pages` pages.
    void pinned(std::uint64_t pages);
    // The outcome of a registration's Vm call, a pin of `v.value` pages when
    // `pins` (else a populate): counted as a registration, or as a failure.
    RegResult count(const VmResult& v, bool pins);
    // The process pins `pinned_bytes` now (the registrar looks after each
    // call, the registration thread after each pin).
    void see_peak(std::uint64_t pinned_bytes);
};

// What a strategy's hooks work with: one process (`pid` in `vm`), the
// node's cores (CPU work of its own runs there as activity "registration";
// Vm calls charge their own), the run's settings and the statistics.
struct StrategyEnv {
    const Config& config;
    Vm& vm;
    int pid;
    CpuCores& cpu;
    RegistrationStats& stats;
};

// One process's registrations under one strategy.
class RegistrationStrategy {
public:
    virtual ~RegistrationStrategy() = default;
    // Make [va, va+len) usable by the engine from `at`; `write`: the engine
    // will write it.
    virtual RegResult acquire(std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at) = 0;
    // The engine is done with [va, va+len).
    virtual RegResult release(std::uint64_t va, std::uint64_t len, sc_core::sc_time at) = 0;
    // A buffer the application has just allocated (RdmaProcess::alloc), from
    // `at`. By default nothing (done at `at`).
    virtual RegResult on_alloc(std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    // The library's registration thread (StrategyKind::registration_thread):
    // whether work waits for it, and its next piece of work from `at`
    // (returns when done). By default there is none.
    virtual bool background_pending() const { return false; }
    virtual sc_core::sc_time background_step(sc_core::sc_time at) { return at; }
    // End of the program: what the strategy still holds is given back. By
    // default nothing (done at `at`).
    virtual RegResult release_all(sc_core::sc_time at);
    // The MMU notifier: this process's [va, va+len) changed mapping. By
    // default nothing is kept that it could make stale.
    virtual void invalidate(std::uint64_t va, std::uint64_t len);

protected:
    static constexpr std::uint64_t kPage = 4096;
    // The page boundary at or below, at or above `a`.
    static std::uint64_t page_down(std::uint64_t a) { return a & ~(kPage - 1); }
    static std::uint64_t page_up(std::uint64_t a) { return (a + kPage - 1) & ~(kPage - 1); }
};

// A strategy that registers nothing: the engine meets the buffer as it is.
class Unregistered final : public RegistrationStrategy {
public:
    RegResult acquire(std::uint64_t, std::uint64_t, bool, sc_core::sc_time at) override {
        return RegResult{true, VmError::Ok, at};
    }
    RegResult release(std::uint64_t, std::uint64_t, sc_core::sc_time at) override {
        return RegResult{true, VmError::Ok, at};
    }
};

struct StrategyKind {
    using Factory = std::function<std::unique_ptr<RegistrationStrategy>(const StrategyEnv&)>;
    struct Setting {
        std::string key, value;
    };

    std::string name;   // rdma.strategy's value
    // Its place among rdma.strategy's choices and in the help (lower first).
    int order = 0;
    std::string help;   // "name: what it does", a clause of rdma.strategy's help
    Factory create;
    // Settings of the rest of the machine it needs, and why (System::resolve
    // sets each one left at its default, and refuses one set otherwise).
    std::vector<Setting> implies;
    std::string implies_why;
    // Whether its registration makes a buffer's pages present before the
    // engine touches them (pins or populates them). With smmu.enabled =
    // false such a strategy runs the physical-address experiment
    // (library/rdma/physical.hpp); one that does not leaves the pages'
    // faults to the engine.
    bool makes_present = false;
    // Whether it needs smmu.enabled = true: the processes' virtual memory,
    // translated for the engine. One that does not and makes nothing
    // present runs on the physical DMA memory of smmu.enabled = false.
    bool needs_smmu = false;
    // Whether the receiving engine redirects packets for non-resident
    // destination pages into a kernel buffer, copied into place once the
    // page is in (NetVM): the node enables it.
    bool redirects_faulted_packets = false;
    // Whether the library runs its registration thread, woken at each
    // allocation (RegistrationStrategy::background_*).
    bool registration_thread = false;
    // Whether the library splits each transfer in rdma.pipeline-chunk pieces,
    // each registered and posted on its own.
    bool chunked = false;
    // Whether it pins at each post (a message's range, cached or not), on
    // top of what the library locks for itself.
    bool pins_per_post = false;
    // Its own summary metrics, present when `present` says (may be empty).
    std::function<void(MetricRegistry&, const MetricRegistry::Presence& present)> declare_metrics;

    // Declared at static initialisation, in the strategy's own file.
    struct Declare {
        explicit Declare(StrategyKind k);
    };
};

namespace registration_strategies {

// Every declared strategy, by order.
const std::vector<StrategyKind>& all();
// The strategy `name` (std::logic_error if none is declared so:
// rdma.strategy's choices are the declared names).
const StrategyKind& of(const std::string& name);
// The strategy a configuration runs: the one place rdma.strategy is read.
const StrategyKind& of(const Config& c);
// Every strategy's own metrics, by order.
void declare_metrics(MetricRegistry& reg, const MetricRegistry::Presence& present);

}   // namespace registration_strategies
}   // namespace vrdmasim
