// Context banks: construction, statistics and the walk request a bank's
// registers describe. See context_bank.hpp.
#include "models/smmu/context_bank.hpp"

#include <algorithm>

namespace vrdmasim {

namespace r = smmu_reg;

ContextBank::ContextBank(unsigned n, StatRegistry& s, const std::string& p)
    : index(n),
      translated(s.counter(p + ".translated", "", "transactions translated by this context bank")),
      bypassed(s.counter(p + ".bypassed", "", "transactions passed untranslated (SCTLR.M = 0)")),
      faults_translation(s.counter(p + ".faults_translation", "", "translation faults (FSR.TF)")),
      faults_access_flag(s.counter(p + ".faults_access_flag", "", "access flag faults (FSR.AFF)")),
      faults_permission(s.counter(p + ".faults_permission", "", "permission faults (FSR.PF)")),
      faults_external(s.counter(p + ".faults_external", "", "external faults on walk reads (FSR.EF)")),
      faults_read(s.counter(p + ".faults_read", "", "faults of reads (FSYNR0.WNR = 0)")),
      faults_write(s.counter(p + ".faults_write", "", "faults of writes (FSYNR0.WNR = 1)")),
      faults_multi(
          s.counter(p + ".faults_multi", "", "faults that found FSR already set (FSR.MULTI; syndrome not recorded)")),
      stalled_transactions(
          s.counter(p + ".stalled_transactions", "", "transactions stalled on a fault (SCTLR.CFCFG = 1)")),
      held_behind_stall(
          s.counter(p + ".held_behind_stall", "", "transactions that waited behind a stalled one (HUPCF)")),
      resumes_retry(s.counter(p + ".resumes_retry", "", "effective RESUME writes with TnR = 0 (retry)")),
      resumes_terminate(s.counter(p + ".resumes_terminate", "", "effective RESUME writes with TnR = 1 (terminate)")),
      resumes_ignored(
          s.counter(p + ".resumes_ignored", "", "RESUME writes ignored: nothing stalled, or FSR fault bits still set")),
      invalidations(s.counter(p + ".invalidations", "",
                              "TLB invalidation commands (TLBIVA, TLBIVAA, TLBIASID, TLBIALL, TLBIALLNSNH)")),
      entries_invalidated(
          s.counter(p + ".entries_invalidated", "", "TLB and walk-cache entries those commands removed")),
      stall_time(s.histogram(p + ".stall_time", "us", "time a stalled transaction waited for RESUME")) {}

WalkRequest ContextBank::walk_request(std::uint64_t va, bool write) const {
    WalkRequest rq;
    rq.cb = index;
    rq.ttbr = ttbr0 & aarch64::kAddrMask;
    rq.asid = asid();
    rq.t0sz = tcr & 0x3f;
    rq.check_af = (sctlr & r::SCTLR_AFE) != 0;
    rq.write = write;
    rq.va = va;
    return rq;
}

void ContextBank::note_asid(std::uint16_t a) {
    if (!asids.empty() && asids.back() == a) return;
    if (std::find(asids.begin(), asids.end(), a) == asids.end()) asids.push_back(a);
}

ContextBanks::ContextBanks(StatRegistry& s, const std::string& smmu_name)
    : stats_(s),
      prefix_(smmu_name + ".cb"),
      owner_(sc_core::sc_get_curr_simcontext()->hierarchy_curr()),
      banks_(r::kContextBanks) {
    // Sums by suffix over the banks (smmu_faults, ...) must read 0, not a
    // missing statistic, on a run where no bank was made.
    static const char* const kCounters[] = {
        "translated",         "bypassed",      "faults_translation", "faults_access_flag", "faults_permission",
        "faults_external",    "faults_read",   "faults_write",       "faults_multi",       "stalled_transactions",
        "held_behind_stall",  "resumes_retry", "resumes_terminate",  "resumes_ignored",    "invalidations",
        "entries_invalidated"};
    for (const char* c : kCounters) s.declare_counter(std::string("smmu.cbN.") + c);
    s.declare_histogram("smmu.cbN.stall_time");
}

ContextBank& ContextBanks::make(unsigned n) {
    const UnderModule under(owner_);
    banks_.at(n) = std::make_unique<ContextBank>(n, stats_, prefix_ + std::to_string(n));
    return *banks_[n];
}

const ContextBank& ContextBanks::reset() {
    // Never written, its statistics never read: a registry of its own.
    static const auto* bank = [] {
        static auto* sink = new StatRegistry;
        return new ContextBank(0, *sink, "reset");
    }();
    return *bank;
}

}   // namespace vrdmasim
