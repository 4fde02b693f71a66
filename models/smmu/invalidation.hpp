// TLB invalidation of the SMMUv2 architecture (ARM IHI 0062; Linux
// arm-smmu.c): the context bank commands TLBIVA, TLBIVAA, TLBIASID and
// TLBIALL and the global TLBIALLNSNH, applied to every TBU's micro-TLB, the
// TCU's macro-TLB and the walk cache. A command is complete when its
// register write returns (TLBSYNC / sTLBGSYNC have nothing to wait for).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/core/stats.hpp"
#include "models/smmu/context_bank.hpp"
#include "models/smmu/tbu.hpp"
#include "models/smmu/tcu.hpp"

namespace vrdmasim {

enum class Tlbi { Va, Vaa, Asid, All };

class Invalidator {
public:
    Invalidator(ContextBanks& cbs, std::vector<std::unique_ptr<Tbu>>& tbus, Tcu& tcu, StatRegistry& s,
                const std::string& smmu_name);
    // A command of bank cbi with the value written (VA and ASID for Va,
    // VA for Vaa, ASID for Asid). Returns entries removed.
    unsigned invalidate(unsigned cbi, Tlbi kind, std::uint64_t value);
    // TLBIALLNSNH: every bank, and the whole walk cache.
    void invalidate_all_banks();

private:
    unsigned invalidate_tlb(Tlb& tlb, const ContextBank& c, Tlbi kind, std::uint16_t asid, std::uint64_t va);

    ContextBanks& cbs_;
    std::vector<std::unique_ptr<Tbu>>& tbus_;
    Tcu& tcu_;
    Counter& global_tlbi_;
};

}   // namespace vrdmasim
