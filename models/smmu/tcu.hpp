// The MMU-500 translation control unit (ARM DDI 0517): the macro-TLB shared
// by all TBUs, the walk cache, and the page-table walks, each in a walk slot
// of the TBU that asked for it, reading descriptors through the `walk`
// port. Also the untimed walks of debug translations. The TLB, walk cache
// and walker logic are in translation.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "src/core/context.hpp"
#include "models/smmu/params.hpp"
#include "models/smmu/translation.hpp"

namespace vrdmasim {

class Tcu {
public:
    Tcu(const SmmuConfig& p, const SimContext& ctx, const std::string& group, const std::string& smmu_name,
        tlm::tlm_initiator_socket<>& walk_port);

    // Macro-TLB lookup for a micro-TLB miss whose lookup completes at
    // `looked_up`: the entry (ready at `ready`; a walk still in flight
    // counts as merged) or nullptr on a miss.
    const Translation* lookup(unsigned cb, std::uint16_t asid, std::uint64_t va, sc_core::sc_time looked_up,
                              sc_core::sc_time& ready);
    void fill(const Translation& t) { macro_.insert(t); }
    // A micro-TLB hit on an entry whose walk is still in flight.
    void count_merged() { walks_merged_.inc(); }
    // A walk wanted at `want` in the earliest-free of `slots` (a TBU's walk
    // slots, busy until).
    WalkResult walk(std::vector<sc_core::sc_time>& slots, const WalkRequest& rq, sc_core::sc_time want);
    // Untimed walk of the current tables (transport_dbg reads, no statistics).
    WalkResult debug_walk(const WalkRequest& rq) { return debug_walker_.walk(rq, sc_core::SC_ZERO_TIME); }

    Tlb& macro_tlb() { return macro_; }
    Tracer& tracer() { return tracer_; }
    WalkCache& walk_cache() { return walk_cache_; }

private:
    sc_core::sc_time walk_read(std::uint64_t pa, std::uint64_t& value, sc_core::sc_time at, bool& ok);
    sc_core::sc_time debug_read(std::uint64_t pa, std::uint64_t& value, sc_core::sc_time at, bool& ok);
    void trace_walk(const WalkRequest& rq, const WalkResult& w, sc_core::sc_time start);
    Tracer::Cause note_walk(const WalkRequest& rq, const WalkResult& w, sc_core::sc_time start);

    tlm::tlm_initiator_socket<>& port_;
    Tlb macro_;
    WalkCache walk_cache_;
    PageTableWalker walker_;
    WalkCache debug_cache_{0};
    PageTableWalker debug_walker_;
    tlm::tlm_generic_payload walk_gp_;
    unsigned char walk_buf_[8] = {};
    std::uint64_t walk_seq_ = 0;

    Tracer& tracer_;
    Tracer::Track track_;
    std::string who_;
    Counter &macro_hits_, &macro_misses_, &walks_, &walk_reads_, &walk_cache_hits_, &walk_faults_, &walks_waited_,
        &walks_merged_;
    Histogram &walk_latency_, &slot_wait_;
};

}   // namespace vrdmasim
