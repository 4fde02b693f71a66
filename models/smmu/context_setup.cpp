#include "models/smmu/context_setup.hpp"

#include <stdexcept>
#include <string>

#include "models/smmu/smmu500.hpp"

namespace vrdmasim {

void program_context(tlm::tlm_fw_transport_if<>& regs, const ContextSetup& s) {
    using namespace smmu_reg;
    auto write = [&regs](std::uint64_t off, std::uint64_t value, unsigned len) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(off);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        if (regs.transport_dbg(gp) != len)
            throw std::logic_error("SMMU register write at offset " + std::to_string(off) + " refused");
    };
    const std::uint64_t base = cb(s.cb);
    std::uint32_t sctlr = SCTLR_M | SCTLR_AFE | SCTLR_CFRE | SCTLR_CFIE;
    if (s.stall) sctlr |= SCTLR_CFCFG;
    if (s.hupcf) sctlr |= SCTLR_HUPCF;
    write(SMR(s.smr), SMR_VALID | ((s.sid_mask & 0x7fff) << 16) | (s.sid & 0x7fff), 4);
    write(S2CR(s.smr), s.cb & 0xff, 4);   // type 0: translate in bank cb
    write(CBAR(s.cb), 1u << 16, 4);   // stage 1 with stage 2 bypass
    write(CBA2R(s.cb), 1, 4);   // AArch64 descriptors
    write(base + TCR, s.t0sz & 0x3f, 4);   // T0SZ, TG0 = 4 KiB
    write(base + MAIR0, 0xff, 4);   // attribute 0: normal, write-back
    write(base + TTBR0, (s.root & aarch64::kAddrMask) | (static_cast<std::uint64_t>(s.asid) << 48), 8);
    write(base + SCTLR, sctlr, 4);
    write(sCR0, (s.unmatched_fault ? sCR0_USFCFG : 0u) | sCR0_GFRE | sCR0_GFIE, 4);   // CLIENTPD clear
}

}   // namespace vrdmasim
