// Fault recording, interrupts, terminate and stall/RESUME. See fault.hpp and
// models/smmu/README.md ("Faults").
#include "models/smmu/fault.hpp"

#include <algorithm>

#include <cstring>
#include <sstream>

#include "models/smmu/smmu_trace.hpp"

namespace vrdmasim {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
namespace r = smmu_reg;

namespace {

// Register bits the public header does not name (SMMUv2 architecture; Linux
// arm-smmu.h).
constexpr std::uint32_t kFsynr0Ptwf = 1u << 10;   // fault on a page-table walk read
constexpr std::uint32_t kGfsrMulti = 1u << 31;
constexpr std::uint32_t kGfsynr0Wnr = 1u << 1;

std::uint32_t fsr_bit(FaultType t) {
    switch (t) {
    case FaultType::Translation: return r::FSR_TF;
    case FaultType::AccessFlag: return r::FSR_AFF;
    case FaultType::Permission: return r::FSR_PF;
    case FaultType::External: return r::FSR_EF;
    default: return 0;
    }
}

// Wait (in the calling SC_THREAD) until absolute time `t`.
void sync_to(const sc_time& t) {
    const sc_time now = sc_core::sc_time_stamp();
    if (t > now) sc_core::wait(t - now);
}

void set_fault_extension(tlm::tlm_generic_payload& gp, int cb, std::uint64_t va, bool write, FaultType type,
                         int level) {
    auto* e = gp.get_extension<SmmuFaultExtension>();
    if (!e) {
        e = new SmmuFaultExtension;
        if (gp.has_mm()) gp.set_auto_extension(e);   // freed when the payload is released
        else gp.set_extension(e);   // stays with the payload; its destructor frees it
    }
    e->cb = cb;
    e->address = va;
    e->write = write;
    e->type = type;
    e->level = level;
}

}   // namespace

FaultUnit::FaultUnit(const SimContext& ctx, const std::string& group, const std::string& smmu_name, IrqLine& irq,
                     ContextBanks& cbs, const StreamMatcher& streams)
    : who_(smmu_name),
      irq_(irq),
      cbs_(cbs),
      streams_(streams),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "smmu faults")),
      global_faults_(ctx.stats.counter(smmu_name + ".global_faults", "",
                                       "global faults recorded in sGFSR (unmatched stream, S2CR fault, bad CBNDX)")) {}

// ---------------------------------------------------------------- context faults

Tracer::Cause FaultUnit::record(ContextBank& c, std::uint32_t sid, std::uint64_t va, bool write, FaultType type,
                                int level, sc_time at, bool stall) {
    switch (type) {
    case FaultType::Translation: c.faults_translation.inc(); break;
    case FaultType::AccessFlag: c.faults_access_flag.inc(); break;
    case FaultType::Permission: c.faults_permission.inc(); break;
    default: c.faults_external.inc(); break;
    }
    (write ? c.faults_write : c.faults_read).inc();
    // The syndrome reaches the registers at the fault's own time, not now:
    // another master's earlier-timed fault, recorded later, must find the
    // registers as they were at its time (settle()).
    ContextBank::PendingFault pf;
    pf.at = at;
    pf.fsr_bit = fsr_bit(type);
    pf.fsynr0 = (static_cast<std::uint32_t>(level) & 3u) | (write ? r::FSYNR0_WNR : 0u) |
                (type == FaultType::External ? kFsynr0Ptwf : 0u);
    pf.sid = sid;
    pf.va = va;
    pf.stall = stall;
    if (c.sctlr & r::SCTLR_CFIE) irq_.raise_at(at);
    if (tracer_.noting()) {
        // A zero-length slice (a point that arrows can start from) on "smmu faults".
        // Whether it will be the first the registers describe, as far as the
        // faults recorded so far say (narration only: settle() decides).
        const bool first = !(c.fsr & r::FSR_FAULT) && (c.pending.empty() || c.pending.front().at > at);
        std::ostringstream os;
        os << fault_name(type) << " fault in cb" << c.index << " at " << Tracer::hex(va) << " ("
           << (write ? "write" : "read") << ", level " << level << ", stream " << Tracer::hex(sid) << "): "
           << (first ? "FSR, FAR, FSYNR0 and CBFRSYNRA recorded" : "FSR.MULTI set, the first fault's syndrome kept")
           << ((c.sctlr & r::SCTLR_CFIE) ? ", interrupt raised" : ", interrupt disabled (CFIE clear)")
           << (stall ? ", the transaction stalls" : ", the transaction is terminated");
        pf.story =
            tracer_.note(track_, stall ? "fault (stall)" : "fault", at, SC_ZERO_TIME, who_, os.str(), Tracer::Cause{},
                         {{"cb", Tracer::json_number(c.index)},
                          {"va", Tracer::json_hex(va)},
                          {"type", Tracer::json_string(fault_name(type))},
                          {"write", Tracer::json_number(write ? 1 : 0)},
                          {"level", Tracer::json_number(level)},
                          {"sid", Tracer::json_hex(sid)}});
    }
    const Tracer::Cause me = pf.story;
    // (In bank order: update_irq raises the line for them in that order.)
    const auto in = std::lower_bound(pending_banks_.begin(), pending_banks_.end(), c.index);
    if (in == pending_banks_.end() || *in != c.index) pending_banks_.insert(in, c.index);
    auto pos = c.pending.end();
    while (pos != c.pending.begin() && (pos - 1)->at > at) --pos;   // after equal times: record order
    c.pending.insert(pos, pf);
    // Whoever runs at `at` or later already sees it.
    settle(c, sc_core::sc_time_stamp());
    return me;
}

void FaultUnit::settle(ContextBank& c, sc_time at) {
    std::size_t n = 0;
    for (; n < c.pending.size() && c.pending[n].at <= at; ++n) {
        const ContextBank::PendingFault& pf = c.pending[n];
        if (c.fsr & r::FSR_FAULT) {
            // A fault is already recorded: keep its syndrome, flag the loss.
            c.fsr |= r::FSR_MULTI;
            c.faults_multi.inc();
        } else {
            c.fsr |= pf.fsr_bit;
            c.far = pf.va;
            c.fsynr0 = pf.fsynr0;
            c.cbfrsynra = pf.sid;
            c.fault_story = pf.story;   // the fault the registers describe
        }
        if (pf.stall) c.fsr |= r::FSR_SS;
    }
    if (n) c.pending.erase(c.pending.begin(), c.pending.begin() + static_cast<std::ptrdiff_t>(n));
}

void FaultUnit::settle(sc_time at) {
    for (std::size_t i = 0; i < pending_banks_.size();) {
        ContextBank& c = cbs_[pending_banks_[i]];
        settle(c, at);
        if (c.pending.empty()) pending_banks_.erase(pending_banks_.begin() + static_cast<std::ptrdiff_t>(i));
        else ++i;
    }
}

bool FaultUnit::context_fault(ContextBank& c, std::uint32_t sid, std::uint64_t va, bool write, FaultType type,
                              int level, sc_time at, sc_time& answered, Tracer::Cause& story) {
    const bool stall_mode = (c.sctlr & r::SCTLR_CFCFG) != 0;
    story = record(c, sid, va, write, type, level, at, stall_mode);
    answered = at;
    if (!stall_mode) return false;
    const bool retry = stall(c, at);
    answered = sc_core::sc_time_stamp();
    return retry;
}

// ---------------------------------------------------------------- stall and RESUME

// A transaction that faulted in stall mode waits here until software
// writes RESUME; returns true for retry, false for terminate.
bool FaultUnit::stall(ContextBank& c, sc_time fault_at) {
    if (c.stalled++ == 0) c.stall_since = fault_at;
    c.stalled_transactions.inc();
    const std::uint64_t gen = c.resume_gen;
    sync_to(fault_at);
    while (c.resume_gen == gen) sc_core::wait(c.resume_ev.get());
    sync_to(c.resume_at);
    const sc_time now = sc_core::sc_time_stamp();
    c.stall_time.add(to_us(now - fault_at));
    if (tracer_.enabled())
        tracer_.async_span(track_, c.resume_retry ? "stalled (retry)" : "stalled (terminate)",
                           span_id(track_, ++stall_seq_), fault_at, now, {{"cb", Tracer::json_number(c.index)}});
    return c.resume_retry;
}

sc_time FaultUnit::hold(ContextBank& c, sc_time t) {
    c.held_behind_stall.inc();
    sync_to(t);
    while (c.stalled) sc_core::wait(c.resume_ev.get());
    sync_to(c.resume_at);
    return sc_core::sc_time_stamp();
}

void FaultUnit::resume(ContextBank& c, std::uint32_t v, sc_time at) {
    settle(c, at);
    if (c.stalled == 0 || (c.fsr & r::FSR_FAULT)) {
        c.resumes_ignored.inc();
        if (tracer_.noting())
            tracer_.note(track_, "RESUME ignored", at, SC_ZERO_TIME, who_,
                         "RESUME of cb" + std::to_string(c.index) +
                             " ignored: " + (c.stalled == 0 ? "no transaction is stalled" : "FSR not cleared yet"));
        return;
    }
    const bool retry = !(v & r::RESUME_TERMINATE);
    (retry ? c.resumes_retry : c.resumes_terminate).inc();
    c.stalled = 0;
    c.fsr &= ~r::FSR_SS;
    c.resume_retry = retry;
    c.resume_at = at;
    ++c.resume_gen;
    const sc_time now = sc_core::sc_time_stamp();
    c.resume_ev.notify(at > now ? at - now : SC_ZERO_TIME);
    if (tracer_.noting())
        tracer_.note(track_, retry ? "RESUME (retry)" : "RESUME (terminate)", at, SC_ZERO_TIME, who_,
                     "RESUME of cb" + std::to_string(c.index) +
                         (retry ? ": the stalled transactions retry their translation"
                                : ": the stalled transactions are terminated"));
}

// ---------------------------------------------------------------- global faults

void FaultUnit::global_fault(std::uint32_t bit, std::uint32_t sid, std::uint64_t va, bool write, sc_time at) {
    global_faults_.inc();
    if (g_.sgfsr) {
        g_.sgfsr |= kGfsrMulti;
    } else {
        g_.sgfsr |= bit;
        g_.sgfar = va;
        g_.sgfsynr0 = write ? kGfsynr0Wnr : 0;
        g_.sgfsynr1 = sid;
    }
    if (streams_.scr0() & r::sCR0_GFIE) irq_.raise_at(at);
    trace_global(sid, va, at);
}

void FaultUnit::trace_global(std::uint32_t sid, std::uint64_t va, sc_time at) {
    if (tracer_.noting())
        tracer_.note(
            track_, "global fault", at, SC_ZERO_TIME, who_,
            "global fault (sGFSR " + Tracer::hex(g_.sgfsr) + ") for stream " + Tracer::hex(sid) + " at " +
                Tracer::hex(va) + ": no context bank translates this stream",
            Tracer::Cause{},
            {{"sid", Tracer::json_hex(sid)}, {"va", Tracer::json_hex(va)}, {"sgfsr", Tracer::json_hex(g_.sgfsr)}});
}

// ---------------------------------------------------------------- interrupt and answer

void FaultUnit::update_irq(sc_time at) {
    settle(at);
    bool any = g_.sgfsr != 0 && (streams_.scr0() & r::sCR0_GFIE);
    for (unsigned n = 0; n < cbs_.size() && !any; ++n) any = cbs_.peek(n).irq_asserted();
    if (any) {
        irq_.raise_at(at);
        return;
    }
    if (irq_.high()) irq_.lower();
    // A fault still ahead of `at` raises the line at its own time.
    for (const unsigned n : pending_banks_) {
        const ContextBank& c = cbs_.peek(n);
        if (!c.pending.empty() && (c.sctlr & r::SCTLR_CFIE)) irq_.raise_at(c.pending.front().at);
    }
}

void FaultUnit::terminate(tlm::tlm_generic_payload& gp, bool abort, int cb, std::uint64_t va, bool write,
                          FaultType type, int level, std::uint64_t from) {
    if (abort) {
        set_fault_extension(gp, cb, va, write, type, level);
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    // RAZ/WI: reads return zeros, writes are dropped, response OKAY.
    if (gp.is_read() && gp.get_data_ptr() && gp.get_data_length() > from)
        std::memset(gp.get_data_ptr() + from, 0, gp.get_data_length() - from);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}   // namespace vrdmasim
