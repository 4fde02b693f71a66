// The NetVM network interface's translation unit (ni.translation = shadow;
// docs/experiments.md "NetVM's network interface"): the engine's memory port goes
// through it instead of through the SMMU. Each access is translated by the
// NI's shadow page table (models/common/shadow_table.hpp), page by page, at
// ni.shadow-lookup per page, and then goes to the bus at its physical
// addresses. While it accesses a page the NI holds it locked (an interval in
// the table, for the OS's reclaim and migration to see). A page not in the
// table is a miss: nothing is accessed, the access ends with an error and a
// fault extension as an SMMU's terminate-mode fault would (so the engine's
// park / NACK / NetVM-buffer machinery runs unchanged), and the miss is
// reported to the OS (an interrupt: ShadowPager), whose outcome comes back
// through Pldma::fault_resolved.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>

#include "src/core/context.hpp"
#include "src/core/metrics.hpp"
#include "src/core/params.hpp"
#include "models/common/shadow_table.hpp"

namespace vrdmasim {

// Section [ni] keys of the NI's translation (the section's link keys are
// the Link's): read through params_of<NiTranslationParams>().
struct NiTranslationParams {
    NiTranslationParams();
    ParamSet set;
    EnumParam translation;
    TimeParam lookup;
    SizeParam credits;
};

// Whether the config asks for the shadow page table (ni.translation = shadow).
bool shadow_translation(const Config& c);
// ConfigError (exit status 2, naming the keys) unless ni.translation =
// shadow can be built as configured: the processes' virtual memory
// (smmu.enabled), no stall mode (a miss always ends the access), and, for
// NetVM (`netvm`: rdma.strategy = netvm), credits the system buffer can
// hold: `nodes` senders x ni.credits <= dma.netvm-buffer, and ni.credits at
// least two of the largest packets (credits.hpp). Nothing with ni.translation = smmu.
void check_shadow_config(const Config& c, unsigned nodes, bool netvm);

// A miss: stream `sid` (process `pid`) accessed `va` (`write`) at `at`.
using ShadowMissFn = std::function<void(std::uint32_t sid, int pid, std::uint64_t va, bool write, sc_core::sc_time at)>;

class ShadowTranslator : public sc_core::sc_module {
public:
    tlm_utils::passthrough_target_socket<ShadowTranslator> in;   // from the engine's memory port
    tlm_utils::simple_initiator_socket<ShadowTranslator> out;   // to the node bus (physical)

    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);

    ShadowTranslator(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, ShadowTable& table);

    // The kernel gave stream `sid` (a process's channels) to process `pid`.
    void bind_stream(std::uint32_t sid, int pid) { pid_of_[sid] = pid; }
    void on_miss(ShadowMissFn fn) { on_miss_ = std::move(fn); }

    // The page-lock check the OS uses (at its own time `at`).
    bool locked(int pid, std::uint64_t va, sc_core::sc_time at) const { return table_.locked(pid, va, at); }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // Fail `gp` as a terminate-mode fault on `va` and report the miss.
    void miss(tlm::tlm_generic_payload& gp, std::uint32_t sid, int pid, std::uint64_t va, bool write, bool permission,
              sc_core::sc_time at);

    const SimContext& ctx_;
    ShadowTable& table_;
    sc_core::sc_time lookup_;
    std::map<std::uint32_t, int> pid_of_;
    ShadowMissFn on_miss_;
    Tracer::Track track_;
    Counter &lookups_, &misses_, &locks_, &unknown_streams_;
    Scalar& lookup_us_;
};

}   // namespace vrdmasim
