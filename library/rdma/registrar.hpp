// Registrar: how the RDMA user library makes a user buffer usable by the
// engine (PLDMA + SMMU) before a transfer, and gives it back afterwards, by
// the registration strategy rdma.strategy names (library/rdma/strategy/:
// each strategy in its own file). The registrar keeps what is common to
// every strategy: the statistics, the time of each call, the peak of pinned
// bytes, the MMU notifier of this process.
//
// Loosely timed like Vm: calls take the absolute time `at` and return when
// their work is done; they never wait(). See README.md for the design.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

#include "src/core/context.hpp"
#include "library/rdma/strategy/strategy.hpp"
#include "models/os/cpu.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

class Registrar {
public:
    // Its columns of summary.csv, from the statistics it registers, and
    // each strategy's own.
    static void declare_metrics(MetricRegistry& reg);

    // Statistics under `prefix` ("node0.rdma"). The strategy's CPU work of
    // its own (cache lookups) runs on `cpu` as activity "registration"; Vm
    // calls charge their own costs (activities "pin", "syscall", ...).
    Registrar(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid, CpuCores& cpu);

    // The strategy's declaration and its hooks (inspection, tests).
    const StrategyKind& kind() const { return kind_; }
    const RegistrationStrategy& strategy() const { return *strategy_; }
    // 4 KiB pages this process's registrations pinned so far (every pin
    // call's pages, counted again when pinned again).
    std::uint64_t pages_pinned() const { return stats_.pages_pinned; }
    std::uint64_t pinned_bytes_peak() const { return stats_.peak; }

    // Make [va, va+len) usable by the engine from `at`; `write`: the engine
    // will write it.
    RegResult acquire(std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at);
    // The engine is done with [va, va+len).
    RegResult release(std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    // A buffer the application has just allocated (RdmaProcess::alloc), from
    // `at`: pinned now (pin-static), queued for the registration thread
    // (pin-deferred), or nothing. Returns when the call's work is done.
    RegResult on_alloc(std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    // The registration thread (StrategyKind::registration_thread): whether
    // work waits for it; its next piece of work from `at`, returns when done.
    bool background_pending() const { return strategy_->background_pending(); }
    sc_core::sc_time background_step(sc_core::sc_time at) { return strategy_->background_step(at); }
    // End of the program: whatever the strategy still pins is unpinned.
    RegResult release_all(sc_core::sc_time at);
    // The MMU notifier (bind with Vm::add_invalidate): a change of this
    // pid's [va, va+len) reaches the strategy (pin-cache drops its entries
    // there, their pins released at the start of its next call). Returns `at`.
    sc_core::sc_time invalidate(int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);

private:
    RegResult finish(RegResult r, sc_core::sc_time at);

    Vm& vm_;
    int pid_;
    const StrategyKind& kind_;
    RegistrationStats stats_;
    std::unique_ptr<RegistrationStrategy> strategy_;
};

}   // namespace vrdmasim
