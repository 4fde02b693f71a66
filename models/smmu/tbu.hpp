// An MMU-500 translation buffer unit (ARM DDI 0517): the path of one
// master's transactions through the SMMU. Route by stream ID, then bypass,
// or translate (its micro-TLB, then the TCU's macro-TLB, then a walk in one
// of its walk slots) and forward with the physical address, or answer the
// fault. Transactions that cross a translation boundary are split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "src/core/stats.hpp"
#include "models/smmu/context_bank.hpp"
#include "models/smmu/fault.hpp"
#include "models/smmu/params.hpp"
#include "models/smmu/stream_match.hpp"
#include "models/smmu/tcu.hpp"
#include "models/smmu/translation.hpp"

namespace vrdmasim {

// What every TBU of one SMMU shares.
struct TbuShared {
    ContextBanks& cbs;
    StreamMatcher& streams;
    Tcu& tcu;
    FaultUnit& faults;
    tlm::tlm_initiator_socket<>& out;   // translated transactions, to memory
    sc_core::sc_time hit_lat;   // micro-TLB hit, also paid by bypassed transactions
    sc_core::sc_time macro_lat;   // extra of a macro-TLB hit
    Counter &transactions, &missing_sid, &unmatched;
};

class Tbu {
public:
    Tbu(const TbuShared& shared, StatRegistry& s, const std::string& prefix, const SmmuConfig& p);

    // b_transport of this TBU's socket.
    void serve(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // transport_dbg: translates with the current tables (not the TLBs), no statistics.
    unsigned debug(tlm::tlm_generic_payload& gp);

    // For invalidation: the micro-TLB, and forgetting the last hit mirrored from it.
    Tlb& micro_tlb() { return micro_; }
    void forget_hot() { hot_valid_ = false; }

private:
    // A translated address range, or the fault that ended the translation.
    struct Xlate {
        Translation t;
        sc_core::sc_time ready;   // translation available / fault answered
        bool ok = false;
        unsigned cb = 0;
        FaultType type = FaultType::None;
        int level = 0;
        Tracer::Cause story;   // the fault's step in the narrated story
    };

    void serve_translated(unsigned cbi, std::uint32_t sid, tlm::tlm_generic_payload& gp, sc_core::sc_time t,
                          sc_core::sc_time& delay);
    void serve_untranslated(const Route& rt, std::uint32_t sid, tlm::tlm_generic_payload& gp, sc_core::sc_time t,
                            sc_core::sc_time now, sc_core::sc_time& delay);
    void serve_split(unsigned cbi, std::uint32_t sid, tlm::tlm_generic_payload& gp, Xlate x, sc_core::sc_time t,
                     sc_core::sc_time& delay);
    bool translate(unsigned cbi, std::uint32_t sid, std::uint64_t va, bool write, sc_core::sc_time t, Xlate& x);
    const Translation* lookup_micro(unsigned cbi, std::uint16_t asid, std::uint64_t va);
    bool fault(ContextBank& c, std::uint32_t sid, std::uint64_t va, bool write, FaultType type, int level,
               sc_core::sc_time at, Xlate& x, const Tracer::Cause& walk = {});
    void answer_fault(tlm::tlm_generic_payload& gp, const Xlate& x, std::uint64_t va, bool write, std::uint64_t from,
                      sc_core::sc_time& delay);
    void forward(tlm::tlm_generic_payload& gp, std::uint64_t pa, sc_core::sc_time at, sc_core::sc_time now,
                 sc_core::sc_time& delay);
    void insert_micro(const Translation& t) {
        micro_.insert(t);
        hot_valid_ = false;
    }

    TbuShared s_;
    Tlb micro_;
    std::vector<sc_core::sc_time> slot_free_;   // walk slots, busy until
    // Mirror of the micro-TLB entry used last: a repeated hit costs a
    // few compares instead of a scan. Dropped on every fill of this
    // micro-TLB and every invalidation, so it never answers a lookup the
    // micro-TLB would not (LRU order is unaffected: nothing else touched
    // the micro-TLB since that entry was stamped).
    Translation hot_;
    bool hot_valid_ = false;
    RouteCache route_;
    bool privileged_ = false;   // the current transaction's privilege (its route's S2CR.PRIVCFG)
    Counter &accesses_, &micro_hits_, &micro_misses_, &bypassed_, &faults_, &walks_, &split_;
};

}   // namespace vrdmasim
