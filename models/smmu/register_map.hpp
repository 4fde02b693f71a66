// The MMU-500 register map: the offsets and bits of the SMMUv2 register
// file that software (the Linux arm-smmu driver, models/os/smmu_driver) and
// the model share. Sources: ARM IHI 0062 (SMMUv2 architecture), ARM DDI 0517
// (MMU-500 TRM), Linux drivers/iommu/arm-smmu.h (4.14 era).
// Included by smmu500.hpp; decoded by registers.cpp.
#pragma once

#include <cstdint>

namespace vrdmasim {

// Offsets from the SMMU's base (0xFD800000 on the ZynqMP, 128 KiB): 4 KiB
// register pages; global space 0 (GR0) in page 0, global space 1 (GR1) in
// page 1, context bank n in page 16 + n (Linux arm-smmu.h, 4.14 era).
namespace smmu_reg {
// What this MMU-500 implements (reported in sIDR0.NUMSMRG and sIDR1.NUMCB).
constexpr unsigned kContextBanks = 16;
constexpr unsigned kStreamMatchRegisters = 48;

constexpr std::uint64_t kBase = 0xFD800000ull;
constexpr std::uint64_t kSize = 0x20000;
constexpr std::uint64_t kPage = 0x1000;
constexpr std::uint64_t kGr1 = 0x1000;
constexpr std::uint64_t kCbBase = 0x10000;
inline std::uint64_t cb(unsigned n) { return kCbBase + n * kPage; }

// GR0
constexpr std::uint64_t sCR0 = 0x000;
constexpr std::uint32_t sCR0_CLIENTPD = 1u << 0;   // 1: SMMU bypassed for all
constexpr std::uint32_t sCR0_GFRE = 1u << 1;
constexpr std::uint32_t sCR0_GFIE = 1u << 2;
constexpr std::uint32_t sCR0_USFCFG = 1u << 10;   // 1: unmatched stream faults; 0: bypass
constexpr std::uint64_t sIDR0 = 0x020, sIDR1 = 0x024, sIDR2 = 0x028, sIDR7 = 0x03c;
constexpr std::uint64_t sGFAR = 0x040, sGFSR = 0x048, sGFSYNR0 = 0x050;
constexpr std::uint32_t sGFSR_USF = 1u << 1;   // unidentified stream fault
constexpr std::uint64_t TLBIALLNSNH = 0x068;
constexpr std::uint64_t sTLBGSYNC = 0x070, sTLBGSTATUS = 0x074;
inline std::uint64_t SMR(unsigned n) { return 0x800 + 4 * n; }
constexpr std::uint32_t SMR_VALID = 1u << 31;   // ID [14:0], MASK [30:16]
inline std::uint64_t S2CR(unsigned n) { return 0xc00 + 4 * n; }
// S2CR: CBNDX [7:0], TYPE [17:16]: 0 translate, 1 bypass, 2 fault.
// PRIVCFG [25:24]: 0 default (the transaction's own attribute), 1 DIPAN,
// 2 unprivileged, 3 privileged (ARM SMMUv2 architecture, S2CR; Linux
// arm-smmu.h ARM_SMMU_S2CR_PRIVCFG, enum arm_smmu_s2cr_privcfg).
constexpr unsigned S2CR_PRIVCFG_SHIFT = 24;
constexpr std::uint32_t S2CR_PRIVCFG_UNPRIV = 2u << S2CR_PRIVCFG_SHIFT;
constexpr std::uint32_t S2CR_PRIVCFG_PRIV = 3u << S2CR_PRIVCFG_SHIFT;

// GR1
inline std::uint64_t CBAR(unsigned n) { return kGr1 + 4 * n; }   // TYPE [17:16], IRPTNDX [31:24]
inline std::uint64_t CBFRSYNRA(unsigned n) { return kGr1 + 0x400 + 4 * n; }   // stream ID of the fault
inline std::uint64_t CBA2R(unsigned n) { return kGr1 + 0x800 + 4 * n; }   // VA64 bit 0

// Context bank (offsets within its page)
constexpr std::uint64_t SCTLR = 0x00;
constexpr std::uint32_t SCTLR_M = 1u << 0;
constexpr std::uint32_t SCTLR_TRE = 1u << 1;
constexpr std::uint32_t SCTLR_AFE = 1u << 2;
constexpr std::uint32_t SCTLR_CFRE = 1u << 5;   // abort (not RAZ/WI) on a terminated fault
constexpr std::uint32_t SCTLR_CFIE = 1u << 6;   // context fault interrupt enable
constexpr std::uint32_t SCTLR_CFCFG = 1u << 7;   // 0 terminate, 1 stall
constexpr std::uint32_t SCTLR_HUPCF = 1u << 8;   // hit under previous context fault
constexpr std::uint64_t RESUME = 0x08;
constexpr std::uint32_t RESUME_TERMINATE = 1u << 0;   // TnR: 0 retry, 1 terminate
constexpr std::uint64_t TTBR0 = 0x20;   // 64-bit: ASID [63:48], table [47:12]
constexpr std::uint64_t TCR = 0x30;   // T0SZ [5:0], TG0 [15:14] (0: 4 KiB)
constexpr std::uint64_t MAIR0 = 0x38;
constexpr std::uint64_t FSR = 0x58;   // write 1 to clear
constexpr std::uint32_t FSR_TF = 1u << 1, FSR_AFF = 1u << 2, FSR_PF = 1u << 3, FSR_EF = 1u << 4;
constexpr std::uint32_t FSR_SS = 1u << 30, FSR_MULTI = 1u << 31;
constexpr std::uint32_t FSR_FAULT = FSR_TF | FSR_AFF | FSR_PF | FSR_EF | FSR_MULTI;   // all but SS
constexpr std::uint64_t FAR = 0x60;   // 64-bit
constexpr std::uint64_t FSYNR0 = 0x68;
constexpr std::uint32_t FSYNR0_WNR = 1u << 4;   // PLVL [1:0]
constexpr std::uint64_t TLBIVA = 0x600;   // 64-bit: VA[55:12] in [43:0], ASID [63:48]
constexpr std::uint64_t TLBIVAA = 0x608;   // all ASIDs
constexpr std::uint64_t TLBIASID = 0x610;
constexpr std::uint64_t TLBIALL = 0x618;
constexpr std::uint64_t TLBSYNC = 0x7f0, TLBSTATUS = 0x7f4;   // TLBSTATUS bit 0: SACTIVE
}   // namespace smmu_reg

}   // namespace vrdmasim
