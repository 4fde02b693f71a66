// Context banks of the SMMUv2 architecture (ARM IHI 0062; Linux
// arm-smmu.h): one bank's translation registers (SCTLR, TTBR0, TCR, MAIR),
// its fault syndrome (FSR, FAR, FSYNR0), its GR1 attribute registers (CBAR,
// CBFRSYNRA, CBA2R), the stall state of its faulted transactions, and its
// statistics. The register decoding is in registers.cpp, the fault and stall
// logic in fault.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/lazy_event.hpp"
#include "src/core/stats.hpp"
#include "models/smmu/register_map.hpp"
#include "models/smmu/translation.hpp"

namespace vrdmasim {

struct ContextBank {
    const unsigned index;
    // Registers.
    std::uint32_t sctlr = 0, actlr = 0, tcr = 0, tcr2 = 0, contextidr = 0, mair0 = 0, mair1 = 0;
    std::uint32_t fsr = 0, fsynr0 = 0, fsynr1 = 0;
    std::uint64_t ttbr0 = 0, ttbr1 = 0, far = 0, par = 0;
    std::uint32_t cbar = 0, cbfrsynra = 0, cba2r = 0;   // this bank's registers in GR1
    // ASIDs of the entries this bank has filled (for TLBIVAA, which
    // removes a VA under every ASID).
    std::vector<std::uint16_t> asids;
    // Stall state: transactions stalled in this bank, since when, and
    // the last effective RESUME.
    unsigned stalled = 0;
    sc_core::sc_time stall_since;
    std::uint64_t resume_gen = 0;
    bool resume_retry = true;
    sc_core::sc_time resume_at;
    LazyEvent resume_ev;   // made at the bank's first stall: most banks never stall
    // The last recorded fault's step in the narrated story: lets the driver's
    // handler and the terminated master name it. Not a register.
    Tracer::Cause fault_story;
    // Faults recorded by transactions whose (loosely timed) time is still
    // ahead of whoever may look: their syndrome reaches FSR, FAR, FSYNR0 and
    // CBFRSYNRA at their own time, in time order (FaultUnit::settle), never
    // before. Sorted by time; empty almost always.
    struct PendingFault {
        sc_core::sc_time at;
        std::uint32_t fsr_bit = 0, fsynr0 = 0, sid = 0;
        std::uint64_t va = 0;
        bool stall = false;
        Tracer::Cause story;
    };
    std::vector<PendingFault> pending;

    Counter &translated, &bypassed, &faults_translation, &faults_access_flag, &faults_permission, &faults_external,
        &faults_read, &faults_write, &faults_multi, &stalled_transactions, &held_behind_stall, &resumes_retry,
        &resumes_terminate, &resumes_ignored, &invalidations, &entries_invalidated;
    Histogram& stall_time;

    ContextBank(unsigned index, StatRegistry& s, const std::string& p);

    std::uint16_t asid() const { return static_cast<std::uint16_t>(ttbr0 >> 48); }   // TTBR0.ASID
    bool translates() const { return (sctlr & smmu_reg::SCTLR_M) != 0; }
    // Its interrupt: a fault bit set in FSR and SCTLR.CFIE on.
    bool irq_asserted() const { return (fsr & smmu_reg::FSR_FAULT) && (sctlr & smmu_reg::SCTLR_CFIE); }
    // The same as seen at `at`: with the pending faults due by then.
    bool irq_asserted(sc_core::sc_time at) const {
        return irq_asserted() || ((sctlr & smmu_reg::SCTLR_CFIE) && !pending.empty() && pending.front().at <= at);
    }
    // The story of the fault the registers describe at `at`.
    Tracer::Cause fault_story_at(sc_core::sc_time at) const {
        if (!(fsr & smmu_reg::FSR_FAULT) && !pending.empty() && pending.front().at <= at)
            return pending.front().story;   // due by `at`, not settled yet: it fills the registers
        return fault_story;
    }
    // The walk of `va` with this bank's TTBR0, TCR.T0SZ and SCTLR.AFE.
    WalkRequest walk_request(std::uint64_t va, bool write) const;
    void note_asid(std::uint16_t asid);
};

// The 16 banks, each made at its first use: when software writes one of
// its registers (its page, or its CBAR, CBFRSYNRA, CBA2R in GR1), or a
// transaction or an invalidation reaches it. Its statistics are registered
// then: most nodes program one bank of 16, and the other 15 banks'
// statistics were a seventh of an idle node's host memory. A bank never
// made reads as at reset and holds nothing (no TLB entry is tagged with
// it), so TLBIALLNSNH has nothing to do there. Each bank holds references
// to statistics and an event, so banks never move; indexing is one load
// and a test more than a plain array.
class ContextBanks {
public:
    ContextBanks(StatRegistry& s, const std::string& smmu_name);
    // The bank, made if it was not.
    ContextBank& operator[](unsigned n) { return banks_[n] ? *banks_[n] : make(n); }
    // For reads that change nothing (register reads, the interrupt line,
    // debug accesses): the bank, or one at reset if it was never made.
    const ContextBank& peek(unsigned n) const { return banks_[n] ? *banks_[n] : reset(); }
    // The bank if it was made, else null.
    ContextBank* made(unsigned n) { return banks_[n].get(); }
    unsigned size() const { return static_cast<unsigned>(banks_.size()); }
    // Whether any bank was ever set to stall on faults (SCTLR.CFCFG): until
    // then no transaction can wait in the SMMU (stalled, or held behind a
    // stalled one).
    void note_stall_mode() { stall_mode_seen_ = true; }
    bool stall_mode_seen() const { return stall_mode_seen_; }

private:
    ContextBank& make(unsigned n);
    static const ContextBank& reset();
    StatRegistry& stats_;
    std::string prefix_;   // "<smmu>.cb"
    // The module under construction when the banks were (the SMMU): a bank
    // made later is made under it (its RESUME event's parent).
    sc_core::sc_module* const owner_;
    std::vector<std::unique_ptr<ContextBank>> banks_;
    bool stall_mode_seen_ = false;
};

}   // namespace vrdmasim
