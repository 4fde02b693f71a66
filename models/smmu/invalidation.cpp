// TLB invalidation commands. See invalidation.hpp and models/smmu/README.md
// ("Invalidation").
#include "models/smmu/invalidation.hpp"

namespace vrdmasim {

Invalidator::Invalidator(ContextBanks& cbs, std::vector<std::unique_ptr<Tbu>>& tbus, Tcu& tcu, StatRegistry& s,
                         const std::string& smmu_name)
    : cbs_(cbs),
      tbus_(tbus),
      tcu_(tcu),
      global_tlbi_(s.counter(smmu_name + ".global_invalidations", "", "TLBIALLNSNH commands")) {}

unsigned Invalidator::invalidate_tlb(Tlb& tlb, const ContextBank& c, Tlbi kind, std::uint16_t asid, std::uint64_t va) {
    switch (kind) {
    case Tlbi::Va: return tlb.invalidate_va(c.index, asid, va);
    case Tlbi::Vaa: {
        unsigned n = 0;
        for (std::uint16_t a : c.asids) n += tlb.invalidate_va(c.index, a, va);
        return n;
    }
    case Tlbi::Asid: return tlb.invalidate_asid(c.index, asid);
    case Tlbi::All: return tlb.invalidate_all(c.index);
    }
    return 0;
}

unsigned Invalidator::invalidate(unsigned cbi, Tlbi kind, std::uint64_t value) {
    ContextBank& c = cbs_[cbi];
    unsigned n = 0;
    const std::uint64_t va = (value & ((1ull << 44) - 1)) << 12;
    const auto asid = static_cast<std::uint16_t>(kind == Tlbi::Asid ? value & 0xffff : value >> 48);
    for (auto& tbu : tbus_) {
        n += invalidate_tlb(tbu->micro_tlb(), c, kind, asid, va);
        tbu->forget_hot();
    }
    n += invalidate_tlb(tcu_.macro_tlb(), c, kind, asid, va);
    // The walk cache has no ASID tag: by-ASID and all drop the bank's
    // walk entries (over-invalidation is allowed), by-VA those on the VA's path.
    if (kind == Tlbi::Va || kind == Tlbi::Vaa) n += tcu_.walk_cache().invalidate_va(cbi, va);
    else n += tcu_.walk_cache().invalidate_cb(cbi);
    c.invalidations.inc();
    c.entries_invalidated.inc(n);
    return n;
}

void Invalidator::invalidate_all_banks() {
    global_tlbi_.inc();
    // A bank never made holds nothing (and has no statistics to count in).
    for (unsigned n = 0; n < cbs_.size(); ++n)
        if (cbs_.made(n)) invalidate(n, Tlbi::All, 0);
    tcu_.walk_cache().invalidate_all();
}

}   // namespace vrdmasim
