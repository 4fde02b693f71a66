// The TCU: macro-TLB lookups, walk slots, timed and debug descriptor reads.
// See tcu.hpp and models/smmu/README.md.
#include "models/smmu/tcu.hpp"

#include <algorithm>
#include <cstring>

#include "models/smmu/smmu_trace.hpp"

namespace vrdmasim {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

Tcu::Tcu(const SmmuConfig& p, const SimContext& ctx, const std::string& group, const std::string& smmu_name,
         tlm::tlm_initiator_socket<>& walk_port)
    : port_(walk_port),
      macro_(p.macro_tlb_entries, p.macro_tlb_ways, p.replacement),
      walk_cache_(p.walk_cache_entries),
      walker_([this](std::uint64_t pa, std::uint64_t& v, sc_time at, bool& ok) { return walk_read(pa, v, at, ok); },
              walk_cache_),
      debug_walker_(
          [this](std::uint64_t pa, std::uint64_t& v, sc_time at, bool& ok) { return debug_read(pa, v, at, ok); },
          debug_cache_),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "smmu tcu")),
      who_(smmu_name),
      macro_hits_(ctx.stats.counter(smmu_name + ".tcu.macro_tlb_hits", "", "macro-TLB lookups that hit a ready entry")),
      macro_misses_(ctx.stats.counter(smmu_name + ".tcu.macro_tlb_misses", "",
                                      "macro-TLB lookups that missed (a walk followed)")),
      walks_(ctx.stats.counter(smmu_name + ".tcu.walks", "", "page-table walks")),
      walk_reads_(ctx.stats.counter(smmu_name + ".tcu.walk_reads", "", "descriptor reads through the walk port")),
      walk_cache_hits_(ctx.stats.counter(smmu_name + ".tcu.walk_cache_hits", "",
                                         "walks that started below the root thanks to the walk cache")),
      walk_faults_(ctx.stats.counter(smmu_name + ".tcu.walk_faults", "", "walks that ended in a fault")),
      walks_waited_(ctx.stats.counter(smmu_name + ".tcu.walks_waited_for_slot", "",
                                      "walks that waited for a free walk slot of their TBU")),
      walks_merged_(ctx.stats.counter(smmu_name + ".tcu.walks_merged", "",
                                      "misses that waited for a walk already in flight instead of starting one")),
      walk_latency_(ctx.stats.histogram(smmu_name + ".tcu.walk_latency", "ns", "walk start to last descriptor back")),
      slot_wait_(ctx.stats.histogram(smmu_name + ".tcu.slot_wait", "ns",
                                     "time a walk waited for a walk slot (walks that waited)")) {
    walk_gp_.set_data_ptr(walk_buf_);
}

const Translation* Tcu::lookup(unsigned cb, std::uint16_t asid, std::uint64_t va, sc_time looked_up, sc_time& ready) {
    const Translation* me = macro_.lookup(cb, asid, va);
    if (!me) {
        macro_misses_.inc();
        return nullptr;
    }
    if (me->valid_from > looked_up) {
        walks_merged_.inc();
        ready = me->valid_from;
    } else {
        macro_hits_.inc();
        ready = looked_up;
    }
    return me;
}

WalkResult Tcu::walk(std::vector<sc_time>& slots, const WalkRequest& rq, sc_time want) {
    auto slot = std::min_element(slots.begin(), slots.end());
    const sc_time start = std::max(want, *slot);
    if (*slot > want) {
        walks_waited_.inc();
        slot_wait_.add(to_ns(*slot - want));
    }
    WalkResult w = walker_.walk(rq, start);
    *slot = w.done;
    walks_.inc();
    walk_cache_hits_.inc(w.cache_hits);
    walk_latency_.add(to_ns(w.done - start));
    if (w.fault != FaultType::None) walk_faults_.inc();
    if (tracer_.enabled()) trace_walk(rq, w, start);
    if (tracer_.noting()) w.story = note_walk(rq, w, start);
    return w;
}

// The walk's line in the log (its slice is the async "walk" span): what it
// read and what it found. Follows whatever the requester is telling.
Tracer::Cause Tcu::note_walk(const WalkRequest& rq, const WalkResult& w, sc_time start) {
    std::string text = "page-table walk in cb" + std::to_string(rq.cb) + " for " + Tracer::hex(rq.va) + " (" +
                       (rq.write ? "write" : "read") + "): " + std::to_string(w.reads) + " descriptor read" +
                       (w.reads == 1 ? "" : "s") + (w.cache_hits ? " (walk cache hit)" : "") + ", " +
                       us_text((w.done - start).value()) + ", ";
    if (w.fault == FaultType::None)
        text += std::string(w.t.size == aarch64::kPageSize ? "page" : "2 MiB block") + " at level " +
                std::to_string(w.level) + " -> PA " + Tracer::hex(w.t.pa_base + (rq.va - w.t.va_base)) +
                (w.t.writable ? "" : " (read-only)");
    else
        text += std::string(fault_name(w.fault)) + " fault at level " + std::to_string(w.level) +
                (w.fault == FaultType::Translation ? " (no valid descriptor)" : "");
    return tracer_.note(Tracer::Track{}, "walk", w.done, sc_core::SC_ZERO_TIME, who_, text);
}

void Tcu::trace_walk(const WalkRequest& rq, const WalkResult& w, sc_time start) {
    tracer_.async_span(track_, w.fault == FaultType::None ? "walk" : "walk (fault)", span_id(track_, ++walk_seq_),
                       start, w.done,
                       {{"cb", Tracer::json_number(rq.cb)},
                        {"va", Tracer::json_hex(rq.va)},
                        {"reads", Tracer::json_number(w.reads)},
                        {"level", Tracer::json_number(w.level)},
                        {"fault", Tracer::json_string(fault_name(w.fault))}});
}

// ---------------------------------------------------------------- memory

sc_time Tcu::walk_read(std::uint64_t pa, std::uint64_t& value, sc_time at, bool& ok) {
    walk_gp_.set_command(tlm::TLM_READ_COMMAND);
    walk_gp_.set_address(pa);
    walk_gp_.set_data_ptr(walk_buf_);
    walk_gp_.set_data_length(8);
    walk_gp_.set_streaming_width(8);
    walk_gp_.set_byte_enable_ptr(nullptr);
    walk_gp_.set_dmi_allowed(false);
    walk_gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const sc_time now = sc_core::sc_time_stamp();
    sc_time d = at > now ? at - now : SC_ZERO_TIME;
    port_->b_transport(walk_gp_, d);
    walk_reads_.inc();
    ok = walk_gp_.is_response_ok();
    std::memcpy(&value, walk_buf_, 8);   // descriptors are little-endian, as is the host
    return sc_core::sc_time_stamp() + d;
}

sc_time Tcu::debug_read(std::uint64_t pa, std::uint64_t& value, sc_time at, bool& ok) {
    tlm::tlm_generic_payload gp;
    unsigned char buf[8] = {};
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(pa);
    gp.set_data_ptr(buf);
    gp.set_data_length(8);
    gp.set_streaming_width(8);
    ok = port_->transport_dbg(gp) == 8;
    std::memcpy(&value, buf, 8);
    return at;
}

}   // namespace vrdmasim
