#include "library/rdma/registrar.hpp"

#include "library/rdma/params.hpp"
#include "models/os/vm_params.hpp"
#include "src/core/failure_causes.hpp"
#include "src/core/format.hpp"

#include "models/smmu/smmu500.hpp"

#include <algorithm>

namespace vrdmasim {

using sc_core::sc_time;

namespace {

// A run's failed transfers: registrations refused, and why the pins behind
// them were (RLIMIT_MEMLOCK, or the node's page frames).
const failure_causes::Declare kRegistrationFailures(10, [](const Config& cfg, const StatRegistry& stats) {
    const std::uint64_t reg = stats.sum_counters("rdma.registration_failures");
    if (!reg) return std::string();
    const std::uint64_t memlock = stats.sum_counters("vm.memlock_refusals");
    const std::uint64_t nomem = stats.sum_counters("vm.pin_no_memory");
    std::string cause;
    if (memlock)
        cause += std::to_string(memlock) +
                 " pin(s) beyond vm.memlock-limit = " + cfg.text(params_of<VmParams>().memlock_limit);
    if (nomem)
        cause += std::string(cause.empty() ? "" : ", ") + std::to_string(nomem) +
                 " pin(s) refused for lack of memory (ENOMEM: the node's page frames cannot hold "
                 "every pinned page resident)";
    if (cause.empty()) cause = "vm.memlock-limit = " + cfg.text(params_of<VmParams>().memlock_limit);
    return std::to_string(reg) +
           " registration(s) failed (rdma.strategy = " + cfg.text(params_of<StrategyParams>().strategy) + ": " + cause +
           ")";
});

}   // namespace

void Registrar::declare_metrics(MetricRegistry& reg) {
    // The library's statistics exist when the processes live in a Vm
    // (smmu.enabled), whether the engine translates through the SMMU or
    // (ni.translation = shadow) the NI's own table.
    const auto processes_in_vm = [](const Config& c) { return c[params_of<SmmuParams>().enabled]; };
    reg.sum_scalars("registration_us", "us",
                    "Time the user libraries spent in registration calls (acquire, release: sum of call "
                    "durations, `*.rdma.registration_time`).",
                    "rdma.registration_time", 6, processes_in_vm);
    reg.sum_scalars("pinned_peak_bytes", "B", "Sum over nodes of each library's peak of pinned bytes.",
                    "rdma.pinned_bytes_peak", 12, processes_in_vm);
    reg.sum_counters("registration_failures", "Registrations refused (RLIMIT_MEMLOCK).", {"rdma.registration_failures"},
                     processes_in_vm);
    registration_strategies::declare_metrics(reg, processes_in_vm);
}

Registrar::Registrar(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid, CpuCores& cpu)
    : vm_(vm),
      pid_(pid),
      kind_(registration_strategies::of(ctx.config)),
      stats_(ctx.stats, prefix),
      strategy_(kind_.create(StrategyEnv{ctx.config, vm, pid, cpu, stats_})) {}

RegResult Registrar::finish(RegResult r, sc_time at) {
    stats_.registration_time.add(to_us(r.done - at));
    stats_.see_peak(vm_.pinned_bytes(pid_));
    return r;
}

RegResult Registrar::acquire(std::uint64_t va, std::uint64_t len, bool write, sc_time at) {
    return finish(strategy_->acquire(va, len, write, at), at);
}

RegResult Registrar::release(std::uint64_t va, std::uint64_t len, sc_time at) {
    return finish(strategy_->release(va, len, at), at);
}

RegResult Registrar::on_alloc(std::uint64_t va, std::uint64_t len, sc_time at) {
    const RegResult r = strategy_->on_alloc(va, len, at);
    // An allocation the strategy took no time over and refused nothing of
    // (nothing to do, or queued for the registration thread) is no
    // registration call: its time is none, and a pin has seen the peak.
    return r.ok && r.done == at ? r : finish(r, at);
}

RegResult Registrar::release_all(sc_time at) { return finish(strategy_->release_all(at), at); }

sc_time Registrar::invalidate(int pid, std::uint16_t, std::uint64_t va, std::uint64_t len, sc_time at) {
    if (pid == pid_) strategy_->invalidate(va, len);
    return at;
}

}   // namespace vrdmasim
