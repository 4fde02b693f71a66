// Programs one stream match and one context bank of an Smmu500 the way the
// Linux arm-smmu driver sets up a stage-1 domain (SMR, S2CR, CBAR, CBA2R,
// TCR, MAIR0, TTBR0 with the ASID, SCTLR; then sCR0 with CLIENTPD clear),
// through the register file's debug transport: untimed, for start-up code,
// benches and tests. The OS model's driver does the same with timed MMIO.
#pragma once

#include <cstdint>

#include <tlm>

namespace vrdmasim {

struct ContextSetup {
    unsigned smr = 0;   // stream-match register / S2CR index
    std::uint32_t sid = 0;   // stream ID to match
    std::uint32_t sid_mask = 0;   // SMR mask: bits that may differ
    unsigned cb = 0;   // context bank
    std::uint64_t root = 0;   // page-table root (TTBR0 [47:12])
    std::uint16_t asid = 1;
    unsigned t0sz = 16;
    bool stall = false;   // SCTLR.CFCFG: stall instead of terminate
    bool hupcf = false;   // SCTLR.HUPCF
    bool unmatched_fault = true;   // sCR0.USFCFG
};

// Throws std::logic_error if a register write is refused.
void program_context(tlm::tlm_fw_transport_if<>& regs, const ContextSetup& s);

}   // namespace vrdmasim
