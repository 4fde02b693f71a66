// Smmu500: the ARM CoreLink MMU-500 of the Zynq UltraScale+ (SMMUv2
// architecture), stage 1 only. TBUs (one TLM target socket each, with a
// micro-TLB) take masters' transactions carrying a stream ID; stream-match
// registers route them to context banks; the TCU (macro-TLB, walk cache, a
// bounded number of walks per TBU) translates them by walking the process's
// page tables in DRAM; faults terminate or stall as SCTLR.CFCFG says;
// translated transactions leave through `out`. Software reaches the register
// file over MMIO at the offsets the Linux arm-smmu driver uses
// (register_map.hpp). See models/smmu/README.md for the file of each part.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>

#include "src/core/context.hpp"
#include "models/common/irq_line.hpp"
#include "models/common/smmu_fault.hpp"
#include "models/common/stream_id.hpp"
#include "models/smmu/register_map.hpp"
#include "models/smmu/translation.hpp"

namespace vrdmasim {

// The parameters of section [smmu], declared in smmu500.cpp; read
// through params_of<SmmuParams>().
struct SmmuParams {
    SmmuParams();
    ParamSet set;
    BoolParam enabled;
    IntParam tbus;
    FrequencyParam clock;
    IntParam tlb_hit_cycles;
    IntParam macro_tlb_hit_cycles;
    IntParam micro_tlb_entries;
    IntParam macro_tlb_entries;
    IntParam macro_tlb_ways;
    EnumParam tlb_replacement;
    IntParam walk_cache_entries;
    IntParam walks_per_tbu;
    TimeParam tlbi_time;
    TimeParam register_latency;
};

class Smmu500 : public sc_core::sc_module {
public:
    static constexpr unsigned kContextBanks = smmu_reg::kContextBanks;
    static constexpr unsigned kStreamMatchRegisters = smmu_reg::kStreamMatchRegisters;

    // Translation requests from masters, one socket per TBU (tag = TBU
    // index). Unbound TBUs are allowed.
    std::vector<std::unique_ptr<tlm_utils::passthrough_target_socket_tagged_optional<Smmu500>>> tbu;
    tlm_utils::simple_initiator_socket<Smmu500> out;   // translated transactions, to memory
    tlm_utils::simple_initiator_socket<Smmu500> walk;   // page-table reads, to memory
    // Register file (offsets from kBase). Optional: a bench may program the
    // SMMU through transport_dbg alone.
    tlm_utils::passthrough_target_socket_optional<Smmu500> regs;

    IrqLine irq;   // all context and global fault interrupts on one line (zynqmp.dtsi)

    static void declare_params(ParamRegistry& reg);
    // Its columns of summary.csv, from the statistics it registers.
    static void declare_metrics(MetricRegistry& reg);
    // Whether a run has SMMUs (smmu.enabled, and ni.translation not shadow):
    // their statistics, and those of the driver, are registered only then.
    static bool enabled_in(const Config& cfg);
    Smmu500(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group);
    ~Smmu500() override;

    // Whether context bank n's interrupt is asserted at time `at` (a fault
    // bit set, by a fault of `at` or before, and CFIE).
    bool context_irq(unsigned n, sc_core::sc_time at) const;
    // The narrated story's step of the fault bank n's registers describe at
    // `at` (empty when nothing is noted): lets the driver's handler name its
    // cause. Not a register, no timing: narration only.
    Tracer::Cause fault_story(unsigned n, sc_core::sc_time at) const;
    // Whether a TBU transaction may wait() in the SMMU: only once a context
    // bank was set to stall on faults (SCTLR.CFCFG), ever. Until then a
    // transaction returns with its delay, and its caller need not be a thread.
    bool may_stall() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    void tbu_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int tbu_debug(int id, tlm::tlm_generic_payload& gp);
    void regs_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int regs_debug(tlm::tlm_generic_payload& gp);
};

}   // namespace vrdmasim
