// A TBU: the path of a transaction through the SMMU, from the stream match
// to the forwarded (or faulted) transaction. See tbu.hpp and
// models/smmu/README.md ("What happens to a transaction").
#include "models/smmu/tbu.hpp"
#include "src/core/force_inline.hpp"

#include <algorithm>

#include "models/common/stream_id.hpp"
#include "src/core/sim_now.hpp"

namespace vrdmasim {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
namespace r = smmu_reg;

namespace {
constexpr std::uint32_t kGfsrIcf = 1u << 0;   // invalid context fault (SMMUv2; Linux arm-smmu.h)
}   // namespace

Tbu::Tbu(const TbuShared& shared, StatRegistry& s, const std::string& p, const SmmuConfig& params)
    : s_(shared),
      micro_(params.micro_tlb_entries, params.micro_tlb_entries, params.replacement),
      slot_free_(params.walks_per_tbu),
      accesses_(s.counter(p + ".accesses", "", "transactions received by this TBU")),
      micro_hits_(s.counter(p + ".micro_tlb_hits", "", "micro-TLB lookups that hit a ready entry")),
      micro_misses_(s.counter(p + ".micro_tlb_misses", "",
                              "micro-TLB lookups that missed (or found an entry whose walk was in flight)")),
      bypassed_(s.counter(p + ".bypassed", "", "transactions passed untranslated (CLIENTPD, S2CR, USFCFG, M)")),
      faults_(s.counter(p + ".faults", "", "transactions that ended in a fault (terminated)")),
      walks_(s.counter(p + ".walks", "", "page-table walks started for this TBU")),
      split_(s.counter(p + ".split_transactions", "",
                       "transactions that crossed a translation boundary and were split")) {}

// ---------------------------------------------------------------- serve

void Tbu::serve(tlm::tlm_generic_payload& gp, sc_time& delay) {
    s_.transactions.inc();
    accesses_.inc();
    const auto* sx = gp.get_extension<StreamIdExtension>();
    if (!sx) {
        s_.missing_sid.inc();
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    const std::uint32_t sid = sx->sid & 0x7fff;
    const std::uint64_t va = gp.get_address();
    const sc_time now = sim_now();
    const sc_time t = now + delay;

    // Fast path: the same stream as last time, hitting the TBU's last
    // micro-TLB entry, in a bank with nothing stalled. It answers exactly
    // as the general path below would for such a hit.
    if (hot_valid_ && s_.streams.cached(route_, sid) && route_.route.kind == RouteKind::Translate) {
        ContextBank& c = s_.cbs[route_.route.cb];
        const Translation& h = hot_;
        const std::uint64_t len = gp.get_data_length() ? gp.get_data_length() : 1;
        if ((c.sctlr & r::SCTLR_M) && !c.stalled && h.cb == route_.route.cb && (h.global || h.asid == c.asid()) &&
            h.contains(va) && len <= h.va_base + h.size - va && h.valid_from <= t && (h.writable || !gp.is_write()) &&
            (h.user || route_.route.privileged)) {
            micro_hits_.inc();
            c.translated.inc();
            forward(gp, h.pa_base + (va - h.va_base), t + s_.hit_lat, now, delay);
            return;
        }
    }

    const Route rt = s_.streams.route(route_, sid);
    privileged_ = rt.privileged;
    if (rt.kind == RouteKind::Translate && s_.cbs[rt.cb].translates()) serve_translated(rt.cb, sid, gp, t, delay);
    else serve_untranslated(rt, sid, gp, t, now, delay);
}

void Tbu::serve_translated(unsigned cbi, std::uint32_t sid, tlm::tlm_generic_payload& gp, sc_time t, sc_time& delay) {
    const std::uint64_t va = gp.get_address();
    Xlate x;
    if (!translate(cbi, sid, va, gp.is_write(), t, x)) {
        answer_fault(gp, x, va, gp.is_write(), 0, delay);
        return;
    }
    s_.cbs[cbi].translated.inc();
    const std::uint64_t len = std::max<std::uint64_t>(gp.get_data_length(), 1);
    if (len <= x.t.va_base + x.t.size - va) {
        // translate() may have waited (a stall): time has moved on.
        forward(gp, x.t.pa_base + (va - x.t.va_base), x.ready, sim_now(), delay);
        return;
    }
    serve_split(cbi, sid, gp, x, t, delay);
}

// Bypass (CLIENTPD, S2CR, unmatched with USFCFG = 0, SCTLR.M = 0) or a
// global fault.
void Tbu::serve_untranslated(const Route& rt, std::uint32_t sid, tlm::tlm_generic_payload& gp, sc_time t, sc_time now,
                             sc_time& delay) {
    const std::uint64_t va = gp.get_address();
    const bool write = gp.is_write();
    switch (rt.kind) {
    case RouteKind::Translate:   // SCTLR.M = 0
        s_.cbs[rt.cb].bypassed.inc();
        [[fallthrough]];
    case RouteKind::UnmatchedBypass:
        if (rt.kind == RouteKind::UnmatchedBypass) s_.unmatched.inc();
        [[fallthrough]];
    case RouteKind::Bypass:
        bypassed_.inc();
        forward(gp, va, t + s_.hit_lat, now, delay);
        return;
    case RouteKind::Unmatched:
        s_.unmatched.inc();
        s_.faults.global_fault(r::sGFSR_USF, sid, va, write, t + s_.hit_lat);
        break;
    case RouteKind::S2crFault: s_.faults.global_fault(r::sGFSR_USF, sid, va, write, t + s_.hit_lat); break;
    case RouteKind::InvalidContext: s_.faults.global_fault(kGfsrIcf, sid, va, write, t + s_.hit_lat); break;
    }
    faults_.inc();
    const bool abort = (s_.streams.scr0() & r::sCR0_GFRE) != 0;
    FaultUnit::terminate(gp, abort, -1, va, write, FaultType::Translation, 0, 0);
    delay = t + s_.hit_lat - now;
}

// A transaction that crosses the end of its first translation (a page
// or block boundary): each piece is translated and sent on its own; the
// payload comes back whole, with the master's address, data pointer and
// length. A fault in a later piece ends the transaction there (the
// pieces before it have been done, as an AXI burst split by the SMMU).
void Tbu::serve_split(unsigned cbi, std::uint32_t sid, tlm::tlm_generic_payload& gp, Xlate x, sc_time t,
                      sc_time& delay) {
    split_.inc();
    const std::uint64_t va = gp.get_address();
    const bool write = gp.is_write();
    if (gp.get_byte_enable_ptr() || gp.get_streaming_width() < gp.get_data_length()) {
        // Byte enables and streaming are not split (no master here uses them).
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    unsigned char* const data = gp.get_data_ptr();
    const unsigned len = gp.get_data_length();
    sc_time done = t;
    std::uint64_t off = 0;
    bool ok = true;
    for (;;) {
        const std::uint64_t at = va + off;
        const auto chunk = static_cast<unsigned>(std::min<std::uint64_t>(len - off, x.t.va_base + x.t.size - at));
        gp.set_address(x.t.pa_base + (at - x.t.va_base));
        gp.set_data_ptr(data + off);
        gp.set_data_length(chunk);
        gp.set_streaming_width(chunk);
        const sc_time now = sim_now();
        sc_time d = x.ready > now ? x.ready - now : SC_ZERO_TIME;
        s_.out->b_transport(gp, d);
        done = std::max(done, sim_now() + d);
        off += chunk;
        if (!gp.is_response_ok() || off >= len) break;
        if (!translate(cbi, sid, va + off, write, t, x)) {
            ok = false;
            break;
        }
    }
    gp.set_address(va);
    gp.set_data_ptr(data);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    if (!ok) {
        x.ready = std::max(x.ready, done);
        answer_fault(gp, x, va + off, write, off, delay);
        return;
    }

    delay = done - sim_now();
}

// Inlined where it is called (core/force_inline.hpp): a hit is little else.
VRDMASIM_FORCE_INLINE void Tbu::forward(tlm::tlm_generic_payload& gp, std::uint64_t pa, sc_time at, sc_time now,
                                        sc_time& delay) {
    const std::uint64_t va = gp.get_address();
    delay = at > now ? at - now : SC_ZERO_TIME;
    gp.set_address(pa);
    s_.out->b_transport(gp, delay);
    gp.set_address(va);
}

// ---------------------------------------------------------------- translation

const Translation* Tbu::lookup_micro(unsigned cbi, std::uint16_t asid, std::uint64_t va) {
    if (hot_valid_ && hot_.cb == cbi && (hot_.global || hot_.asid == asid) && hot_.contains(va)) return &hot_;
    const Translation* e = micro_.lookup(cbi, asid, va);
    if (e) {
        hot_ = *e;
        hot_valid_ = true;
    }
    return e;
}

// Translate `va` for a transaction that reaches the TBU at absolute time
// t. Returns true with x.t / x.ready, or false with the fault in x.
bool Tbu::translate(unsigned cbi, std::uint32_t sid, std::uint64_t va, bool write, sc_time t, Xlate& x) {
    ContextBank& c = s_.cbs[cbi];
    for (;;) {
        if (c.stalled && t >= c.stall_since && !(c.sctlr & r::SCTLR_HUPCF)) {
            t = s_.faults.hold(c, t);
            continue;
        }
        const auto asid = c.asid();
        const Translation* e = lookup_micro(cbi, asid, va);
        sc_time ready;
        if (e && e->valid_from <= t) {
            micro_hits_.inc();
            x.t = *e;
            ready = t + s_.hit_lat;
        } else if (e) {
            // Its walk is still in flight: wait for it.
            micro_misses_.inc();
            s_.tcu.count_merged();
            x.t = *e;
            ready = std::max(t + s_.hit_lat, e->valid_from);
        } else {
            micro_misses_.inc();
            const sc_time looked_up = t + s_.hit_lat + s_.macro_lat;
            if (const Translation* me = s_.tcu.lookup(cbi, asid, va, looked_up, ready)) {
                x.t = *me;
                insert_micro(x.t);
            } else {
                if (c.stalled && t >= c.stall_since) {   // HUPCF = 1: a miss waits behind the stall
                    t = s_.faults.hold(c, t);
                    continue;
                }
                const WalkResult w = s_.tcu.walk(slot_free_, c.walk_request(va, write), looked_up);
                walks_.inc();
                if (w.fault != FaultType::None) {
                    if (fault(c, sid, va, write, w.fault, w.level, w.done, x, w.story)) {
                        t = sim_now();
                        continue;
                    }
                    return false;
                }
                x.t = w.t;
                x.t.valid_from = w.done;
                s_.tcu.fill(x.t);
                insert_micro(x.t);
                c.note_asid(x.t.asid);
                ready = w.done;
            }
        }
        // Permission: a write to a read-only leaf (AP[2]); an unprivileged
        // access to a leaf without EL0 access (AP[1] clear).
        if ((write && !x.t.writable) || (!x.t.user && !privileged_)) {
            const int level = x.t.size == aarch64::kPageSize ? 3 : 2;
            if (fault(c, sid, va, write, FaultType::Permission, level, ready, x)) {
                t = sim_now();
                continue;
            }
            return false;
        }
        x.ok = true;
        x.ready = ready;
        return true;
    }
}

// ---------------------------------------------------------------- faults

// Record a fault of the translation of `va`, then either end the
// translation (returns false, x describes the fault) or, in stall mode,
// wait for RESUME (returns true for a retry).
bool Tbu::fault(ContextBank& c, std::uint32_t sid, std::uint64_t va, bool write, FaultType type, int level, sc_time at,
                Xlate& x, const Tracer::Cause& walk) {
    const Tracer::Scope after_walk(s_.tcu.tracer(), walk);   // the fault follows the walk that found it
    x.ok = false;
    x.cb = c.index;
    x.type = type;
    x.level = level;
    return s_.faults.context_fault(c, sid, va, write, type, level, at, x.ready, x.story);
}

void Tbu::answer_fault(tlm::tlm_generic_payload& gp, const Xlate& x, std::uint64_t va, bool write, std::uint64_t from,
                       sc_time& delay) {
    faults_.inc();
    const bool abort = (s_.cbs[x.cb].sctlr & r::SCTLR_CFRE) != 0;
    FaultUnit::terminate(gp, abort, static_cast<int>(x.cb), va, write, x.type, x.level, from);
    if (auto* e = gp.get_extension<SmmuFaultExtension>()) e->story = x.story;
    const sc_time now = sim_now();
    delay = x.ready > now ? x.ready - now : SC_ZERO_TIME;
}

// ---------------------------------------------------------------- debug

// Untimed: walks the current tables (not the TLBs), no statistics.
unsigned Tbu::debug(tlm::tlm_generic_payload& gp) {
    const auto* sx = gp.get_extension<StreamIdExtension>();
    if (!sx) return 0;
    const Route rt = s_.streams.match(sx->sid & 0x7fff);
    if (rt.kind == RouteKind::Bypass || rt.kind == RouteKind::UnmatchedBypass ||
        (rt.kind == RouteKind::Translate && !s_.cbs.peek(rt.cb).translates()))
        return s_.out->transport_dbg(gp);
    if (rt.kind != RouteKind::Translate) return 0;
    const ContextBank& c = s_.cbs.peek(rt.cb);
    const std::uint64_t va = gp.get_address();
    unsigned char* const data = gp.get_data_ptr();
    const unsigned len = gp.get_data_length();
    unsigned done = 0;
    while (done < len) {
        const WalkRequest rq = c.walk_request(va + done, gp.is_write());
        const WalkResult w = s_.tcu.debug_walk(rq);
        if (w.fault != FaultType::None) break;
        const auto chunk = static_cast<unsigned>(std::min<std::uint64_t>(len - done, w.t.va_base + w.t.size - rq.va));
        gp.set_address(w.t.pa_base + (rq.va - w.t.va_base));
        gp.set_data_ptr(data + done);
        gp.set_data_length(chunk);
        const unsigned n = s_.out->transport_dbg(gp);
        done += n;
        if (n != chunk) break;
    }
    gp.set_address(va);
    gp.set_data_ptr(data);
    gp.set_data_length(len);
    return done;
}

}   // namespace vrdmasim
