#include "models/smmu/smmu500.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
namespace r = smmu_reg;

namespace {

// Register bits the public header does not name (SMMUv2 architecture; Linux
// arm-smmu.h).
constexpr std::uint32_t kFsrFaultBits = r::FSR_TF | r::FSR_AFF | r::FSR_PF | r::FSR_EF;
constexpr std::uint32_t kFsynr0Ptwf = 1u << 10;      // fault on a page-table walk read
constexpr std::uint32_t kGfsrIcf = 1u << 0;          // invalid context fault
constexpr std::uint32_t kGfsrMulti = 1u << 31;
constexpr std::uint32_t kGfsynr0Wnr = 1u << 1;
constexpr std::uint32_t kSmrValid = r::SMR_VALID;

// Offsets without a name in the header, stored so that drivers can program
// them (they have no effect on translation).
constexpr std::uint64_t kSAcr = 0x010;
constexpr std::uint64_t kSGfsynr1 = 0x054;
constexpr std::uint64_t kSGfsynr2 = 0x058;
constexpr std::uint64_t kCbActlr = 0x04;
constexpr std::uint64_t kCbTcr2 = 0x10;
constexpr std::uint64_t kCbTtbr1 = 0x28;
constexpr std::uint64_t kCbContextIdr = 0x34;
constexpr std::uint64_t kCbMair1 = 0x3c;
constexpr std::uint64_t kCbPar = 0x50;
constexpr std::uint64_t kCbFsynr1 = 0x6c;

// ID registers (field layout as in Linux arm-smmu.h).
constexpr std::uint32_t kIdr0 = (1u << 30)            // S1TS: stage 1 translation
                              | (1u << 27)            // SMS: stream matching
                              | (1u << 26)            // ATOSNS: no address translation operations
                              | (2u << 24)            // PTFS: AArch64 tables only
                              | (16u << 16)           // NUMIRPT: context interrupts
                              | (15u << 9)            // NUMSIDB: 15-bit stream IDs
                              | Smmu500::kStreamMatchRegisters;   // NUMSMRG
constexpr std::uint32_t kIdr1 = (0u << 31)            // PAGESIZE: 4 KiB register pages
                              | (3u << 28)            // NUMPAGENDXB: 2^(3+1) = 16 global pages -> CB at 64 KiB
                              | (0u << 16)            // NUMS2CB
                              | Smmu500::kContextBanks;           // NUMCB
constexpr std::uint32_t kIdr2 = (1u << 12)            // PTFS_4K
                              | (5u << 8)             // UBS: 49-bit upstream bus
                              | (5u << 4)             // OAS: 48 bits
                              | 5u;                   // IAS: 48 bits
constexpr std::uint32_t kIdr7 = (2u << 4) | 0u;       // MAJOR 2, MINOR 0 (*estimate*: MMU-500 r2)

constexpr std::uint32_t kS2crTranslate = 0, kS2crBypass = 1;
constexpr std::uint32_t kS2crResetValue = 2u << 16;   // fault (see README)

inline sc_time later(const sc_time& a, const sc_time& b) { return a > b ? a : b; }

const char* fault_name(FaultType t) {
    switch (t) {
    case FaultType::Translation: return "translation";
    case FaultType::AccessFlag: return "access-flag";
    case FaultType::Permission: return "permission";
    case FaultType::External: return "external";
    default: return "none";
    }
}

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

}  // namespace

// ---------------------------------------------------------------- state

struct Smmu500::Impl {
    struct ContextBank {
        // Registers.
        std::uint32_t sctlr = 0, actlr = 0, tcr = 0, tcr2 = 0, contextidr = 0, mair0 = 0, mair1 = 0;
        std::uint32_t fsr = 0, fsynr0 = 0, fsynr1 = 0;
        std::uint64_t ttbr0 = 0, ttbr1 = 0, far = 0, par = 0;
        // ASIDs of the entries this bank has filled (for TLBIVAA, which
        // removes a VA under every ASID).
        std::vector<std::uint16_t> asids;
        // Stall state: transactions stalled in this bank, since when, and
        // the last effective RESUME.
        unsigned stalled = 0;
        sc_time stall_since;
        std::uint64_t resume_gen = 0;
        bool resume_retry = true;
        sc_time resume_at;
        sc_core::sc_event resume_ev;

        Counter &translated, &bypassed, &faults_translation, &faults_access_flag, &faults_permission,
            &faults_external, &faults_read, &faults_write, &faults_multi, &stalled_transactions, &held_behind_stall,
            &resumes_retry, &resumes_terminate, &resumes_ignored, &invalidations, &entries_invalidated;
        Histogram& stall_time;

        ContextBank(StatRegistry& s, const std::string& p)
            : translated(s.counter(p + ".translated", "", "transactions translated by this context bank")),
              bypassed(s.counter(p + ".bypassed", "", "transactions passed untranslated (SCTLR.M = 0)")),
              faults_translation(s.counter(p + ".faults_translation", "", "translation faults (FSR.TF)")),
              faults_access_flag(s.counter(p + ".faults_access_flag", "", "access flag faults (FSR.AFF)")),
              faults_permission(s.counter(p + ".faults_permission", "", "permission faults (FSR.PF)")),
              faults_external(s.counter(p + ".faults_external", "", "external faults on walk reads (FSR.EF)")),
              faults_read(s.counter(p + ".faults_read", "", "faults of reads (FSYNR0.WNR = 0)")),
              faults_write(s.counter(p + ".faults_write", "", "faults of writes (FSYNR0.WNR = 1)")),
              faults_multi(s.counter(p + ".faults_multi", "",
                                     "faults that found FSR already set (FSR.MULTI; syndrome not recorded)")),
              stalled_transactions(s.counter(p + ".stalled_transactions", "",
                                             "transactions stalled on a fault (SCTLR.CFCFG = 1)")),
              held_behind_stall(s.counter(p + ".held_behind_stall", "",
                                          "transactions that waited behind a stalled one (HUPCF)")),
              resumes_retry(s.counter(p + ".resumes_retry", "", "effective RESUME writes with TnR = 0 (retry)")),
              resumes_terminate(s.counter(p + ".resumes_terminate", "",
                                          "effective RESUME writes with TnR = 1 (terminate)")),
              resumes_ignored(s.counter(p + ".resumes_ignored", "",
                                        "RESUME writes ignored: nothing stalled, or FSR fault bits still set")),
              invalidations(s.counter(p + ".invalidations", "",
                                      "TLB invalidation commands (TLBIVA, TLBIVAA, TLBIASID, TLBIALL, TLBIALLNSNH)")),
              entries_invalidated(s.counter(p + ".entries_invalidated", "",
                                            "TLB and walk-cache entries those commands removed")),
              stall_time(s.histogram(p + ".stall_time", "us", "time a stalled transaction waited for RESUME")) {}
    };

    enum class RouteKind : std::uint8_t { Bypass, UnmatchedBypass, Translate, Unmatched, S2crFault, InvalidContext };
    struct Route {
        RouteKind kind = RouteKind::Bypass;
        unsigned cb = 0;
    };

    struct TbuState {
        Tlb micro;
        std::vector<sc_time> slot_free;   // walk slots, busy until
        // Mirror of the micro-TLB entry used last: a repeated hit costs a
        // few compares instead of a scan. Dropped on every fill of this
        // micro-TLB and every invalidation, so it never answers a lookup the
        // micro-TLB would not (LRU order is unaffected: nothing else touched
        // the micro-TLB since that entry was stamped).
        Translation hot;
        bool hot_valid = false;
        // Stream-match result for the last stream ID seen (valid while
        // route_gen equals the SMMU's stream-configuration generation).
        std::uint32_t route_sid = 0;
        std::uint64_t route_gen = ~0ull;
        Route route;
        Counter &accesses, &micro_hits, &micro_misses, &bypassed, &faults, &walks, &split;

        TbuState(StatRegistry& s, const std::string& p, unsigned entries, TlbReplacement pol, unsigned slots)
            : micro(entries, entries, pol),
              slot_free(slots),
              accesses(s.counter(p + ".accesses", "", "transactions received by this TBU")),
              micro_hits(s.counter(p + ".micro_tlb_hits", "", "micro-TLB lookups that hit a ready entry")),
              micro_misses(s.counter(p + ".micro_tlb_misses", "",
                                     "micro-TLB lookups that missed (or found an entry whose walk was in flight)")),
              bypassed(s.counter(p + ".bypassed", "", "transactions passed untranslated (CLIENTPD, S2CR, USFCFG, M)")),
              faults(s.counter(p + ".faults", "", "transactions that ended in a fault (terminated)")),
              walks(s.counter(p + ".walks", "", "page-table walks started for this TBU")),
              split(s.counter(p + ".split_transactions", "",
                              "transactions that crossed a translation boundary and were split")) {}
    };

    // A translated address range, or the fault that ended the translation.
    struct Xlate {
        Translation t;
        sc_time ready;     // translation available / fault answered
        bool ok = false;
        unsigned cb = 0;
        FaultType type = FaultType::None;
        int level = 0;
    };

    Smmu500& m;
    const std::string who;
    const unsigned ntbu;
    const sc_time hit_lat, macro_lat, tlbi_time, reg_latency;

    // Global registers.
    std::uint32_t scr0 = r::sCR0_CLIENTPD, sacr = 0, sgfsr = 0, sgfsynr0 = 0, sgfsynr1 = 0, sgfsynr2 = 0;
    std::uint64_t sgfar = 0;
    std::array<std::uint32_t, kStreamMatchRegisters> smr{}, s2cr{};
    std::array<std::uint32_t, kContextBanks> cbar{}, cbfrsynra{}, cba2r{};
    std::uint64_t route_gen = 0;

    // Elements hold references to statistics, so they never move; indexing
    // is one load more than a plain array (a deque's is several).
    template <typename T>
    struct Fixed {
        std::vector<std::unique_ptr<T>> v;
        template <typename... A>
        void emplace_back(A&&... a) { v.push_back(std::make_unique<T>(std::forward<A>(a)...)); }
        T& operator[](std::size_t i) { return *v[i]; }
        const T& operator[](std::size_t i) const { return *v[i]; }
        std::size_t size() const { return v.size(); }
    };
    Fixed<ContextBank> cbs;
    Fixed<TbuState> tbus;
    Tlb macro;
    WalkCache walk_cache;
    PageTableWalker walker;
    WalkCache debug_cache{0};
    PageTableWalker debug_walker;
    tlm::tlm_generic_payload walk_gp;
    unsigned char walk_buf[8] = {};
    std::uint64_t walk_seq = 0, stall_seq = 0;

    Tracer& tracer;
    Tracer::Track tcu_track, fault_track;

    Counter &transactions, &missing_sid, &unmatched, &global_faults, &reg_accesses, &unknown_regs, &global_tlbi;
    Counter &macro_hits, &macro_misses, &walks, &walk_reads, &walk_cache_hits, &walk_faults, &walks_waited,
        &walks_merged;
    Histogram &walk_latency, &slot_wait;

    // Async-span ids unique across the run (viewers match begin and end by
    // category and id, whatever the process): the track in the top bits.
    static std::uint64_t span_id(Tracer::Track t, std::uint64_t seq) {
        return (static_cast<std::uint64_t>(t.pid) << 48) | (static_cast<std::uint64_t>(t.tid) << 40) | seq;
    }

    static std::string stat(const Smmu500& m, const std::string& s) { return std::string(m.name()) + "." + s; }

    Impl(Smmu500& owner, const SimContext& ctx, const std::string& group)
        : m(owner),
          who(owner.name()),
          ntbu(static_cast<unsigned>(ctx.config[params_of<SmmuParams>().tbus])),
          hit_lat(cycles(ctx, ctx.config[params_of<SmmuParams>().tlb_hit_cycles])),
          macro_lat(cycles(ctx, ctx.config[params_of<SmmuParams>().macro_tlb_hit_cycles])),
          tlbi_time(ctx.config[params_of<SmmuParams>().tlbi_time]),
          reg_latency(ctx.config[params_of<SmmuParams>().register_latency]),
          macro(checked_macro_entries(ctx), static_cast<unsigned>(ctx.config[params_of<SmmuParams>().macro_tlb_ways]),
                parse_replacement(ctx.config[params_of<SmmuParams>().tlb_replacement])),
          walk_cache(static_cast<unsigned>(ctx.config[params_of<SmmuParams>().walk_cache_entries])),
          walker([this](std::uint64_t pa, std::uint64_t& v, sc_time at, bool& ok) { return walk_read(pa, v, at, ok); },
                 walk_cache),
          debug_walker([this](std::uint64_t pa, std::uint64_t& v, sc_time at, bool& ok) {
              return debug_read(pa, v, at, ok);
          }, debug_cache),
          tracer(ctx.tracer),
          tcu_track(ctx.tracer.track(group, "smmu tcu")),
          fault_track(ctx.tracer.track(group, "smmu faults")),
          transactions(ctx.stats.counter(stat(owner, "transactions"), "",
                                         "timed transactions served (TBU transactions + register accesses)")),
          missing_sid(ctx.stats.counter(stat(owner, "missing_stream_id"), "",
                                        "transactions without a StreamIdExtension (master's bug; error response)")),
          unmatched(ctx.stats.counter(stat(owner, "unmatched_streams"), "",
                                      "transactions whose stream ID matched no valid SMR")),
          global_faults(ctx.stats.counter(stat(owner, "global_faults"), "",
                                          "global faults recorded in sGFSR (unmatched stream, S2CR fault, bad CBNDX)")),
          reg_accesses(ctx.stats.counter(stat(owner, "register_accesses"), "", "timed register reads and writes")),
          unknown_regs(ctx.stats.counter(stat(owner, "unknown_register_accesses"), "",
                                         "register accesses to unimplemented offsets (RAZ/WI)")),
          global_tlbi(ctx.stats.counter(stat(owner, "global_invalidations"), "", "TLBIALLNSNH commands")),
          macro_hits(ctx.stats.counter(stat(owner, "tcu.macro_tlb_hits"), "", "macro-TLB lookups that hit a ready entry")),
          macro_misses(ctx.stats.counter(stat(owner, "tcu.macro_tlb_misses"), "",
                                         "macro-TLB lookups that missed (a walk followed)")),
          walks(ctx.stats.counter(stat(owner, "tcu.walks"), "", "page-table walks")),
          walk_reads(ctx.stats.counter(stat(owner, "tcu.walk_reads"), "", "descriptor reads through the walk port")),
          walk_cache_hits(ctx.stats.counter(stat(owner, "tcu.walk_cache_hits"), "",
                                            "walks that started below the root thanks to the walk cache")),
          walk_faults(ctx.stats.counter(stat(owner, "tcu.walk_faults"), "", "walks that ended in a fault")),
          walks_waited(ctx.stats.counter(stat(owner, "tcu.walks_waited_for_slot"), "",
                                         "walks that waited for a free walk slot of their TBU")),
          walks_merged(ctx.stats.counter(stat(owner, "tcu.walks_merged"), "",
                                         "misses that waited for a walk already in flight instead of starting one")),
          walk_latency(ctx.stats.histogram(stat(owner, "tcu.walk_latency"), "ns", "walk start to last descriptor back")),
          slot_wait(ctx.stats.histogram(stat(owner, "tcu.slot_wait"), "ns",
                                        "time a walk waited for a walk slot (walks that waited)")) {
        const auto entries = static_cast<unsigned>(ctx.config[params_of<SmmuParams>().micro_tlb_entries]);
        const auto policy = parse_replacement(ctx.config[params_of<SmmuParams>().tlb_replacement]);
        const auto slots = static_cast<unsigned>(ctx.config[params_of<SmmuParams>().walks_per_tbu]);
        for (unsigned i = 0; i < kContextBanks; ++i) cbs.emplace_back(ctx.stats, stat(owner, "cb" + std::to_string(i)));
        for (unsigned i = 0; i < ntbu; ++i)
            tbus.emplace_back(ctx.stats, stat(owner, "tbu" + std::to_string(i)), entries, policy, slots);
        s2cr.fill(kS2crResetValue);
        walk_gp.set_data_ptr(walk_buf);
    }

    static sc_time cycles(const SimContext& ctx, std::int64_t n) {
        const double ps = 1e12 / ctx.config[params_of<SmmuParams>().clock];
        return sc_time::from_value(static_cast<sc_dt::uint64>(static_cast<double>(n) * ps + 0.5));
    }
    static unsigned checked_macro_entries(const SimContext& ctx) {
        const auto e = ctx.config[params_of<SmmuParams>().macro_tlb_entries];
        const auto w = ctx.config[params_of<SmmuParams>().macro_tlb_ways];
        if (w > e || e % w != 0)
            throw ConfigError("smmu.macro-tlb-entries (" + std::to_string(e) + ") must be a multiple of smmu.macro-tlb-ways (" +
                              std::to_string(w) + ")");
        return static_cast<unsigned>(e);
    }

    // ------------------------------------------------------------ memory

    sc_time walk_read(std::uint64_t pa, std::uint64_t& value, sc_time at, bool& ok) {
        walk_gp.set_command(tlm::TLM_READ_COMMAND);
        walk_gp.set_address(pa);
        walk_gp.set_data_ptr(walk_buf);
        walk_gp.set_data_length(8);
        walk_gp.set_streaming_width(8);
        walk_gp.set_byte_enable_ptr(nullptr);
        walk_gp.set_dmi_allowed(false);
        walk_gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        const sc_time now = sc_core::sc_time_stamp();
        sc_time d = at > now ? at - now : SC_ZERO_TIME;
        m.walk->b_transport(walk_gp, d);
        walk_reads.inc();
        ok = walk_gp.is_response_ok();
        std::memcpy(&value, walk_buf, 8);   // descriptors are little-endian, as is the host
        return sc_core::sc_time_stamp() + d;
    }

    sc_time debug_read(std::uint64_t pa, std::uint64_t& value, sc_time at, bool& ok) {
        tlm::tlm_generic_payload gp;
        unsigned char buf[8] = {};
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(pa);
        gp.set_data_ptr(buf);
        gp.set_data_length(8);
        gp.set_streaming_width(8);
        ok = m.walk->transport_dbg(gp) == 8;
        std::memcpy(&value, buf, 8);
        return at;
    }

    // ------------------------------------------------------------ stream matching

    Route match(std::uint32_t sid) const {
        Route rt;
        if (scr0 & r::sCR0_CLIENTPD) return rt;   // bypass everything
        for (unsigned i = 0; i < kStreamMatchRegisters; ++i) {
            const std::uint32_t s = smr[i];
            if (!(s & kSmrValid)) continue;
            const std::uint32_t id = s & 0x7fff, mask = (s >> 16) & 0x7fff;
            if (((sid ^ id) & ~mask & 0x7fff) != 0) continue;
            const std::uint32_t type = (s2cr[i] >> 16) & 3;
            if (type == kS2crBypass) return rt;
            if (type != kS2crTranslate) {
                rt.kind = RouteKind::S2crFault;
                return rt;
            }
            rt.cb = s2cr[i] & 0xff;
            rt.kind = rt.cb < kContextBanks ? RouteKind::Translate : RouteKind::InvalidContext;
            return rt;
        }
        rt.kind = (scr0 & r::sCR0_USFCFG) ? RouteKind::Unmatched : RouteKind::UnmatchedBypass;
        return rt;
    }

    const Route& route(TbuState& T, std::uint32_t sid) {
        if (T.route_gen != route_gen || T.route_sid != sid) {
            T.route = match(sid);
            T.route_sid = sid;
            T.route_gen = route_gen;
        }
        return T.route;
    }

    // ------------------------------------------------------------ interrupts

    bool cb_irq(unsigned n) const { return (cbs[n].fsr & r::FSR_FAULT) && (cbs[n].sctlr & r::SCTLR_CFIE); }
    bool global_irq() const { return sgfsr != 0 && (scr0 & r::sCR0_GFIE); }

    // Re-evaluate the shared line after software changed a status or enable bit.
    void update_irq(sc_time at) {
        bool any = global_irq();
        for (unsigned n = 0; n < kContextBanks && !any; ++n) any = cb_irq(n);
        if (any)
            m.irq.raise_at(at);
        else if (m.irq.high())
            m.irq.lower();
    }

    // ------------------------------------------------------------ faults

    void set_fault_extension(tlm::tlm_generic_payload& gp, int cb, std::uint64_t va, bool write, FaultType type,
                             int level) {
        auto* e = gp.get_extension<SmmuFaultExtension>();
        if (!e) {
            e = new SmmuFaultExtension;
            if (gp.has_mm())
                gp.set_auto_extension(e);   // freed when the payload is released
            else
                gp.set_extension(e);        // stays with the payload; its destructor frees it
        }
        e->cb = cb;
        e->address = va;
        e->write = write;
        e->type = type;
        e->level = level;
    }

    void record_fault(unsigned cbi, std::uint32_t sid, std::uint64_t va, bool write, FaultType type, int level,
                      sc_time at, bool stall) {
        ContextBank& c = cbs[cbi];
        switch (type) {
        case FaultType::Translation: c.faults_translation.inc(); break;
        case FaultType::AccessFlag: c.faults_access_flag.inc(); break;
        case FaultType::Permission: c.faults_permission.inc(); break;
        default: c.faults_external.inc(); break;
        }
        (write ? c.faults_write : c.faults_read).inc();
        if (c.fsr & r::FSR_FAULT) {
            // A fault is already recorded: keep its syndrome, flag the loss.
            c.fsr |= r::FSR_MULTI;
            c.faults_multi.inc();
        } else {
            c.fsr |= fsr_bit(type);
            c.far = va;
            c.fsynr0 = (static_cast<std::uint32_t>(level) & 3u) | (write ? r::FSYNR0_WNR : 0u) |
                       (type == FaultType::External ? kFsynr0Ptwf : 0u);
            cbfrsynra[cbi] = sid;
        }
        if (stall) c.fsr |= r::FSR_SS;
        if (c.sctlr & r::SCTLR_CFIE) m.irq.raise_at(at);
        if (tracer.enabled()) {
            tracer.instant(fault_track, stall ? "fault (stall)" : "fault",
                           at, {{"cb", Tracer::json_number(cbi)},
                                {"va", Tracer::json_number(va)},
                                {"type", Tracer::json_string(fault_name(type))},
                                {"write", Tracer::json_number(write ? 1 : 0)},
                                {"level", Tracer::json_number(level)},
                                {"sid", Tracer::json_number(sid)}});
        }
        if (tracer.narrating()) {
            std::ostringstream os;
            os << fault_name(type) << " fault in cb" << cbi << " at 0x" << std::hex << va << std::dec << " ("
               << (write ? "write" : "read") << ", level " << level << ", stream 0x" << std::hex << sid << std::dec
               << ")" << (stall ? ", stalled" : ", terminated");
            tracer.narrate(at, who, os.str());
        }
    }

    // A transaction that faulted in stall mode waits here until software
    // writes RESUME; returns true for retry, false for terminate.
    bool stall(unsigned cbi, sc_time fault_at) {
        ContextBank& c = cbs[cbi];
        if (c.stalled++ == 0) c.stall_since = fault_at;
        c.stalled_transactions.inc();
        const std::uint64_t gen = c.resume_gen;
        sync_to(fault_at);
        while (c.resume_gen == gen) sc_core::wait(c.resume_ev);
        sync_to(c.resume_at);
        const sc_time now = sc_core::sc_time_stamp();
        c.stall_time.add(to_us(now - fault_at));
        if (tracer.enabled())
            tracer.async_span(fault_track, c.resume_retry ? "stalled (retry)" : "stalled (terminate)",
                              span_id(fault_track, ++stall_seq),
                              fault_at, now, {{"cb", Tracer::json_number(cbi)}});
        return c.resume_retry;
    }

    // Wait behind a stalled transaction of bank c; returns the time to go on from.
    sc_time hold(ContextBank& c, sc_time t) {
        c.held_behind_stall.inc();
        sync_to(t);
        while (c.stalled) sc_core::wait(c.resume_ev);
        sync_to(c.resume_at);
        return sc_core::sc_time_stamp();
    }

    void global_fault(std::uint32_t bit, std::uint32_t sid, std::uint64_t va, bool write, sc_time at) {
        global_faults.inc();
        if (sgfsr) {
            sgfsr |= kGfsrMulti;
        } else {
            sgfsr |= bit;
            sgfar = va;
            sgfsynr0 = write ? kGfsynr0Wnr : 0;
            sgfsynr1 = sid;
        }
        if (scr0 & r::sCR0_GFIE) m.irq.raise_at(at);
        if (tracer.enabled())
            tracer.instant(fault_track, "global fault", at,
                           {{"sid", Tracer::json_number(sid)}, {"va", Tracer::json_number(va)},
                            {"sgfsr", Tracer::json_number(sgfsr)}});
        if (tracer.narrating()) {
            std::ostringstream os;
            os << "global fault (sGFSR 0x" << std::hex << sgfsr << ") for stream 0x" << sid << " at 0x" << va;
            tracer.narrate(at, who, os.str());
        }
    }

    // Answer a terminated transaction: abort or RAZ/WI. `from` is the byte
    // offset of the part that was not transferred.
    static void terminate(tlm::tlm_generic_payload& gp, bool abort, std::uint64_t from) {
        if (abort) {
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            return;
        }
        // RAZ/WI: reads return zeros, writes are dropped, response OKAY.
        if (gp.is_read() && gp.get_data_ptr() && gp.get_data_length() > from)
            std::memset(gp.get_data_ptr() + from, 0, gp.get_data_length() - from);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }

    // ------------------------------------------------------------ translation

    void insert_micro(TbuState& T, const Translation& t) {
        T.micro.insert(t);
        T.hot_valid = false;
    }

    void note_asid(ContextBank& c, std::uint16_t asid) {
        if (!c.asids.empty() && c.asids.back() == asid) return;
        if (std::find(c.asids.begin(), c.asids.end(), asid) == c.asids.end()) c.asids.push_back(asid);
    }

    WalkResult run_walk(TbuState& T, unsigned cbi, std::uint64_t va, bool write, sc_time want) {
        ContextBank& c = cbs[cbi];
        auto slot = std::min_element(T.slot_free.begin(), T.slot_free.end());
        const sc_time start = later(want, *slot);
        if (*slot > want) {
            walks_waited.inc();
            slot_wait.add(to_ns(*slot - want));
        }
        const std::size_t slot_index = static_cast<std::size_t>(slot - T.slot_free.begin());
        WalkRequest rq;
        rq.cb = cbi;
        rq.ttbr = c.ttbr0 & aarch64::kAddrMask;
        rq.asid = static_cast<std::uint16_t>(c.ttbr0 >> 48);
        rq.t0sz = c.tcr & 0x3f;
        rq.check_af = (c.sctlr & r::SCTLR_AFE) != 0;
        rq.write = write;
        rq.va = va;
        WalkResult w = walker.walk(rq, start);
        T.slot_free[slot_index] = w.done;
        walks.inc();
        T.walks.inc();
        walk_cache_hits.inc(w.cache_hits);
        walk_latency.add(to_ns(w.done - start));
        if (w.fault != FaultType::None) walk_faults.inc();
        if (tracer.enabled()) {
            tracer.async_span(tcu_track, w.fault == FaultType::None ? "walk" : "walk (fault)",
                              span_id(tcu_track, ++walk_seq), start,
                              w.done,
                              {{"cb", Tracer::json_number(cbi)},
                               {"va", Tracer::json_number(va)},
                               {"reads", Tracer::json_number(w.reads)},
                               {"level", Tracer::json_number(w.level)},
                               {"fault", Tracer::json_string(fault_name(w.fault))}});
        }
        return w;
    }

    // Handle a fault of the translation of `va`: record it, then either end
    // the translation (returns false, x describes the fault) or, in stall
    // mode, wait for RESUME (returns true for a retry).
    bool fault(unsigned cbi, std::uint32_t sid, std::uint64_t va, bool write, FaultType type, int level,
               sc_time at, Xlate& x) {
        const bool stall_mode = (cbs[cbi].sctlr & r::SCTLR_CFCFG) != 0;
        record_fault(cbi, sid, va, write, type, level, at, stall_mode);
        x.ok = false;
        x.cb = cbi;
        x.type = type;
        x.level = level;
        x.ready = at;
        if (!stall_mode) return false;
        const bool retry = stall(cbi, at);
        x.ready = sc_core::sc_time_stamp();
        return retry;
    }

    // Translate `va` for a transaction that reaches the TBU at absolute time
    // t. Returns true with x.t / x.ready, or false with the fault in x.
    bool translate(TbuState& T, unsigned cbi, std::uint32_t sid, std::uint64_t va, bool write, sc_time t, Xlate& x) {
        ContextBank& c = cbs[cbi];
        for (;;) {
            if (c.stalled && t >= c.stall_since && !(c.sctlr & r::SCTLR_HUPCF)) {
                t = hold(c, t);
                continue;
            }
            const auto asid = static_cast<std::uint16_t>(c.ttbr0 >> 48);
            const Translation* e = nullptr;
            if (T.hot_valid && T.hot.cb == cbi && (T.hot.global || T.hot.asid == asid) && T.hot.contains(va)) {
                e = &T.hot;
            } else if ((e = T.micro.lookup(cbi, asid, va)) != nullptr) {
                T.hot = *e;
                T.hot_valid = true;
            }
            sc_time ready;
            if (e && e->valid_from <= t) {
                T.micro_hits.inc();
                x.t = *e;
                ready = t + hit_lat;
            } else if (e) {
                // Its walk is still in flight: wait for it.
                T.micro_misses.inc();
                walks_merged.inc();
                x.t = *e;
                ready = later(t + hit_lat, e->valid_from);
            } else {
                T.micro_misses.inc();
                const sc_time looked_up = t + hit_lat + macro_lat;
                const Translation* me = macro.lookup(cbi, asid, va);
                if (me) {
                    x.t = *me;
                    if (me->valid_from > looked_up) {
                        walks_merged.inc();
                        ready = me->valid_from;
                    } else {
                        macro_hits.inc();
                        ready = looked_up;
                    }
                    insert_micro(T, x.t);
                } else {
                    macro_misses.inc();
                    if (c.stalled && t >= c.stall_since) {   // HUPCF = 1: a miss waits behind the stall
                        t = hold(c, t);
                        continue;
                    }
                    const WalkResult w = run_walk(T, cbi, va, write, looked_up);
                    if (w.fault != FaultType::None) {
                        if (fault(cbi, sid, va, write, w.fault, w.level, w.done, x)) {
                            t = sc_core::sc_time_stamp();
                            continue;
                        }
                        return false;
                    }
                    x.t = w.t;
                    x.t.valid_from = w.done;
                    macro.insert(x.t);
                    insert_micro(T, x.t);
                    note_asid(c, x.t.asid);
                    ready = w.done;
                }
            }
            if (write && !x.t.writable) {
                const int level = x.t.size == aarch64::kPageSize ? 3 : 2;
                if (fault(cbi, sid, va, write, FaultType::Permission, level, ready, x)) {
                    t = sc_core::sc_time_stamp();
                    continue;
                }
                return false;
            }
            x.ok = true;
            x.ready = ready;
            return true;
        }
    }

    // ------------------------------------------------------------ TBU

    void forward(tlm::tlm_generic_payload& gp, std::uint64_t pa, sc_time at, sc_time now, sc_time& delay) {
        const std::uint64_t va = gp.get_address();
        delay = at > now ? at - now : SC_ZERO_TIME;
        gp.set_address(pa);
        m.out->b_transport(gp, delay);
        gp.set_address(va);
    }

    void serve(unsigned tbu, tlm::tlm_generic_payload& gp, sc_time& delay) {
        TbuState& T = tbus[tbu];
        transactions.inc();
        T.accesses.inc();
        const auto* sx = gp.get_extension<StreamIdExtension>();
        if (!sx) {
            missing_sid.inc();
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            return;
        }
        const std::uint32_t sid = sx->sid & 0x7fff;
        const std::uint64_t va = gp.get_address();
        const bool write = gp.is_write();
        const sc_time now = sc_core::sc_time_stamp();
        const sc_time t = now + delay;

        // Fast path: the same stream as last time, hitting the TBU's last
        // micro-TLB entry, in a bank with nothing stalled. It answers exactly
        // as the general path below would for such a hit.
        if (T.hot_valid && T.route_sid == sid && T.route_gen == route_gen && T.route.kind == RouteKind::Translate) {
            ContextBank& c = cbs[T.route.cb];
            const Translation& h = T.hot;
            const std::uint64_t len = gp.get_data_length() ? gp.get_data_length() : 1;
            if ((c.sctlr & r::SCTLR_M) && !c.stalled && h.cb == T.route.cb &&
                (h.global || h.asid == static_cast<std::uint16_t>(c.ttbr0 >> 48)) && h.contains(va) &&
                len <= h.va_base + h.size - va && h.valid_from <= t && (h.writable || !gp.is_write())) {
                T.micro_hits.inc();
                c.translated.inc();
                forward(gp, h.pa_base + (va - h.va_base), t + hit_lat, now, delay);
                return;
            }
        }

        const Route rt = route(T, sid);

        if (rt.kind == RouteKind::Translate && (cbs[rt.cb].sctlr & r::SCTLR_M)) {
            Xlate x;
            if (!translate(T, rt.cb, sid, va, write, t, x)) {
                answer_fault(T, gp, x, va, write, 0, delay);
                return;
            }
            cbs[rt.cb].translated.inc();
            const std::uint64_t len = std::max<std::uint64_t>(gp.get_data_length(), 1);
            if (len <= x.t.va_base + x.t.size - va) {
                // translate() may have waited (a stall): time has moved on.
                forward(gp, x.t.pa_base + (va - x.t.va_base), x.ready, sc_core::sc_time_stamp(), delay);
                return;
            }
            serve_split(T, rt.cb, sid, gp, x, t, delay);
            return;
        }

        switch (rt.kind) {
        case RouteKind::Translate:   // SCTLR.M = 0
            cbs[rt.cb].bypassed.inc();
            [[fallthrough]];
        case RouteKind::UnmatchedBypass:
            if (rt.kind == RouteKind::UnmatchedBypass) unmatched.inc();
            [[fallthrough]];
        case RouteKind::Bypass:
            T.bypassed.inc();
            forward(gp, va, t + hit_lat, now, delay);
            return;
        case RouteKind::Unmatched:
            unmatched.inc();
            global_fault(r::sGFSR_USF, sid, va, write, t + hit_lat);
            break;
        case RouteKind::S2crFault:
            global_fault(r::sGFSR_USF, sid, va, write, t + hit_lat);
            break;
        case RouteKind::InvalidContext:
            global_fault(kGfsrIcf, sid, va, write, t + hit_lat);
            break;
        }
        T.faults.inc();
        const bool abort = (scr0 & r::sCR0_GFRE) != 0;
        if (abort) set_fault_extension(gp, -1, va, write, FaultType::Translation, 0);
        terminate(gp, abort, 0);
        delay = t + hit_lat - now;
    }

    void answer_fault(TbuState& T, tlm::tlm_generic_payload& gp, const Xlate& x, std::uint64_t va, bool write,
                      std::uint64_t from, sc_time& delay) {
        T.faults.inc();
        const bool abort = (cbs[x.cb].sctlr & r::SCTLR_CFRE) != 0;
        if (abort) set_fault_extension(gp, static_cast<int>(x.cb), va, write, x.type, x.level);
        terminate(gp, abort, from);
        const sc_time now = sc_core::sc_time_stamp();
        delay = x.ready > now ? x.ready - now : SC_ZERO_TIME;
    }

    // A transaction that crosses the end of its first translation (a page
    // or block boundary): each piece is translated and sent on its own; the
    // payload comes back whole, with the master's address, data pointer and
    // length. A fault in a later piece ends the transaction there (the
    // pieces before it have been done, as an AXI burst split by the SMMU).
    void serve_split(TbuState& T, unsigned cbi, std::uint32_t sid, tlm::tlm_generic_payload& gp, Xlate x, sc_time t,
                     sc_time& delay) {
        T.split.inc();
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
            const sc_time now = sc_core::sc_time_stamp();
            sc_time d = x.ready > now ? x.ready - now : SC_ZERO_TIME;
            m.out->b_transport(gp, d);
            done = later(done, sc_core::sc_time_stamp() + d);
            off += chunk;
            if (!gp.is_response_ok() || off >= len) break;
            if (!translate(T, cbi, sid, va + off, write, t, x)) {
                ok = false;
                break;
            }
        }
        gp.set_address(va);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        if (!ok) {
            x.ready = later(x.ready, done);
            answer_fault(T, gp, x, va + off, write, off, delay);
            return;
        }

        delay = done - sc_core::sc_time_stamp();
    }

    // Untimed: walks the current tables (not the TLBs), no statistics.
    unsigned debug(tlm::tlm_generic_payload& gp) {
        const auto* sx = gp.get_extension<StreamIdExtension>();
        if (!sx) return 0;
        const Route rt = match(sx->sid & 0x7fff);
        if (rt.kind == RouteKind::Bypass || rt.kind == RouteKind::UnmatchedBypass ||
            (rt.kind == RouteKind::Translate && !(cbs[rt.cb].sctlr & r::SCTLR_M)))
            return m.out->transport_dbg(gp);
        if (rt.kind != RouteKind::Translate) return 0;
        const ContextBank& c = cbs[rt.cb];
        const std::uint64_t va = gp.get_address();
        unsigned char* const data = gp.get_data_ptr();
        const unsigned len = gp.get_data_length();
        unsigned done = 0;
        while (done < len) {
            WalkRequest rq;
            rq.cb = rt.cb;
            rq.ttbr = c.ttbr0 & aarch64::kAddrMask;
            rq.asid = static_cast<std::uint16_t>(c.ttbr0 >> 48);
            rq.t0sz = c.tcr & 0x3f;
            rq.check_af = (c.sctlr & r::SCTLR_AFE) != 0;
            rq.write = gp.is_write();
            rq.va = va + done;
            const WalkResult w = debug_walker.walk(rq, SC_ZERO_TIME);
            if (w.fault != FaultType::None) break;
            const auto chunk =
                static_cast<unsigned>(std::min<std::uint64_t>(len - done, w.t.va_base + w.t.size - rq.va));
            gp.set_address(w.t.pa_base + (rq.va - w.t.va_base));
            gp.set_data_ptr(data + done);
            gp.set_data_length(chunk);
            const unsigned n = m.out->transport_dbg(gp);
            done += n;
            if (n != chunk) break;
        }
        gp.set_address(va);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        return done;
    }

    // ------------------------------------------------------------ invalidation

    enum class Tlbi { Va, Vaa, Asid, All };

    // Returns entries removed.
    unsigned invalidate(unsigned cbi, Tlbi kind, std::uint64_t value) {
        ContextBank& c = cbs[cbi];
        unsigned n = 0;
        const std::uint64_t va = (value & ((1ull << 44) - 1)) << 12;
        const auto asid = static_cast<std::uint16_t>(kind == Tlbi::Asid ? value & 0xffff : value >> 48);
        auto on_tlb = [&](Tlb& tlb) {
            switch (kind) {
            case Tlbi::Va: n += tlb.invalidate_va(cbi, asid, va); break;
            case Tlbi::Vaa:
                for (std::uint16_t a : c.asids) n += tlb.invalidate_va(cbi, a, va);
                break;
            case Tlbi::Asid: n += tlb.invalidate_asid(cbi, asid); break;
            case Tlbi::All: n += tlb.invalidate_all(cbi); break;
            }
        };
        for (auto& tp : tbus.v) {
            TbuState& T = *tp;
            on_tlb(T.micro);
            T.hot_valid = false;
        }
        on_tlb(macro);
        // The walk cache has no ASID tag: by-ASID and all drop the bank's
        // walk entries (over-invalidation is allowed), by-VA those on the VA's path.
        if (kind == Tlbi::Va || kind == Tlbi::Vaa)
            n += walk_cache.invalidate_va(cbi, va);
        else
            n += walk_cache.invalidate_cb(cbi);
        c.invalidations.inc();
        c.entries_invalidated.inc(n);
        return n;
    }

    // ------------------------------------------------------------ registers

    static bool is64(std::uint64_t off) {
        if (off == r::sGFAR) return true;
        if (off < r::kCbBase) return false;
        const std::uint64_t o = off % r::kPage;
        return o == r::TTBR0 || o == kCbTtbr1 || o == kCbPar || o == r::FAR || o == r::TLBIVA || o == r::TLBIVAA;
    }
    static bool is_cb(std::uint64_t off) { return off >= r::kCbBase && off < r::kCbBase + kContextBanks * r::kPage; }

    // 64-bit registers (offset 8-aligned, is64).
    std::uint64_t read64(std::uint64_t off) const {
        if (off == r::sGFAR) return sgfar;
        const ContextBank& c = cbs[(off - r::kCbBase) / r::kPage];
        switch (off % r::kPage) {
        case r::TTBR0: return c.ttbr0;
        case kCbTtbr1: return c.ttbr1;
        case kCbPar: return c.par;
        case r::FAR: return c.far;
        default: return 0;   // TLBIVA, TLBIVAA: write-only
        }
    }

    void write64(std::uint64_t off, std::uint64_t v, sc_time& extra) {
        if (off == r::sGFAR) {
            sgfar = v;
            return;
        }
        const auto cbi = static_cast<unsigned>((off - r::kCbBase) / r::kPage);
        ContextBank& c = cbs[cbi];
        switch (off % r::kPage) {
        case r::TTBR0: c.ttbr0 = v; break;
        case kCbTtbr1: c.ttbr1 = v; break;
        case kCbPar: c.par = v; break;
        case r::FAR: c.far = v; break;
        case r::TLBIVA:
            invalidate(cbi, Tlbi::Va, v);
            extra += tlbi_time;
            break;
        case r::TLBIVAA:
            invalidate(cbi, Tlbi::Vaa, v);
            extra += tlbi_time;
            break;
        default: break;
        }
    }

    // 32-bit registers. `known` is cleared for unimplemented offsets.
    std::uint32_t read32(std::uint64_t off, bool& known) const {
        if (off < r::kGr1) {
            switch (off) {
            case r::sCR0: return scr0;
            case kSAcr: return sacr;
            case r::sIDR0: return kIdr0;
            case r::sIDR1: return kIdr1;
            case r::sIDR2: return kIdr2;
            case 0x02c: case 0x030: case 0x034: case 0x038: return 0;   // sIDR3..6
            case r::sIDR7: return kIdr7;
            case r::sGFSR: return sgfsr;
            case r::sGFSYNR0: return sgfsynr0;
            case kSGfsynr1: return sgfsynr1;
            case kSGfsynr2: return sgfsynr2;
            case r::TLBIALLNSNH: case r::sTLBGSYNC: case r::sTLBGSTATUS: return 0;
            default: break;
            }
            if (off >= r::SMR(0) && off < r::SMR(kStreamMatchRegisters)) return smr[(off - r::SMR(0)) / 4];
            if (off >= r::S2CR(0) && off < r::S2CR(kStreamMatchRegisters)) return s2cr[(off - r::S2CR(0)) / 4];
        } else if (off < r::kGr1 + r::kPage) {
            if (off >= r::CBAR(0) && off < r::CBAR(kContextBanks)) return cbar[(off - r::CBAR(0)) / 4];
            if (off >= r::CBFRSYNRA(0) && off < r::CBFRSYNRA(kContextBanks))
                return cbfrsynra[(off - r::CBFRSYNRA(0)) / 4];
            if (off >= r::CBA2R(0) && off < r::CBA2R(kContextBanks)) return cba2r[(off - r::CBA2R(0)) / 4];
        } else if (is_cb(off)) {
            const ContextBank& c = cbs[(off - r::kCbBase) / r::kPage];
            switch (off % r::kPage) {
            case r::SCTLR: return c.sctlr;
            case kCbActlr: return c.actlr;
            case r::RESUME: return 0;
            case kCbTcr2: return c.tcr2;
            case r::TCR: return c.tcr;
            case kCbContextIdr: return c.contextidr;
            case r::MAIR0: return c.mair0;
            case kCbMair1: return c.mair1;
            case r::FSR: return c.fsr;
            case r::FSYNR0: return c.fsynr0;
            case kCbFsynr1: return c.fsynr1;
            case r::TLBIASID: case r::TLBIALL: case r::TLBSYNC: case r::TLBSTATUS: return 0;
            default: break;
            }
        }
        known = false;
        return 0;
    }

    void write32(std::uint64_t off, std::uint32_t v, sc_time at, sc_time& extra, bool& known) {
        if (off < r::kGr1) {
            switch (off) {
            case r::sCR0:
                scr0 = v;
                ++route_gen;
                update_irq(at);
                return;
            case kSAcr: sacr = v; return;
            case r::sIDR0: case r::sIDR1: case r::sIDR2: case 0x02c: case 0x030: case 0x034: case 0x038:
            case r::sIDR7:
                return;   // read-only
            case r::sGFSR:
                sgfsr &= ~v;
                update_irq(at);
                return;
            case r::sGFSYNR0: sgfsynr0 = v; return;
            case kSGfsynr1: sgfsynr1 = v; return;
            case kSGfsynr2: sgfsynr2 = v; return;
            case r::TLBIALLNSNH: {
                global_tlbi.inc();
                for (unsigned n = 0; n < kContextBanks; ++n) invalidate(n, Tlbi::All, 0);
                walk_cache.invalidate_all();
                extra += tlbi_time;
                return;
            }
            case r::sTLBGSYNC: case r::sTLBGSTATUS: return;   // invalidations are complete when written
            default: break;
            }
            if (off >= r::SMR(0) && off < r::SMR(kStreamMatchRegisters)) {
                smr[(off - r::SMR(0)) / 4] = v & 0xffff7fffu;
                ++route_gen;
                return;
            }
            if (off >= r::S2CR(0) && off < r::S2CR(kStreamMatchRegisters)) {
                s2cr[(off - r::S2CR(0)) / 4] = v;
                ++route_gen;
                return;
            }
        } else if (off < r::kGr1 + r::kPage) {
            if (off >= r::CBAR(0) && off < r::CBAR(kContextBanks)) {
                cbar[(off - r::CBAR(0)) / 4] = v;
                return;
            }
            if (off >= r::CBFRSYNRA(0) && off < r::CBFRSYNRA(kContextBanks)) {
                cbfrsynra[(off - r::CBFRSYNRA(0)) / 4] = v;
                return;
            }
            if (off >= r::CBA2R(0) && off < r::CBA2R(kContextBanks)) {
                cba2r[(off - r::CBA2R(0)) / 4] = v;
                return;
            }
        } else if (is_cb(off)) {
            const auto cbi = static_cast<unsigned>((off - r::kCbBase) / r::kPage);
            ContextBank& c = cbs[cbi];
            switch (off % r::kPage) {
            case r::SCTLR:
                c.sctlr = v;
                update_irq(at);
                return;
            case kCbActlr: c.actlr = v; return;
            case r::RESUME: resume(cbi, v, at); return;
            case kCbTcr2: c.tcr2 = v; return;
            case r::TCR: c.tcr = v; return;
            case kCbContextIdr: c.contextidr = v; return;
            case r::MAIR0: c.mair0 = v; return;
            case kCbMair1: c.mair1 = v; return;
            case r::FSR:
                c.fsr &= ~(v & ~r::FSR_SS);   // write 1 to clear; SS is cleared by RESUME
                update_irq(at);
                return;
            case r::FSYNR0: c.fsynr0 = v; return;
            case kCbFsynr1: c.fsynr1 = v; return;
            case r::TLBIASID:
                invalidate(cbi, Tlbi::Asid, v);
                extra += tlbi_time;
                return;
            case r::TLBIALL:
                invalidate(cbi, Tlbi::All, 0);
                extra += tlbi_time;
                return;
            case r::TLBSYNC: case r::TLBSTATUS: return;
            default: break;
            }
        }
        known = false;
    }

    void resume(unsigned cbi, std::uint32_t v, sc_time at) {
        ContextBank& c = cbs[cbi];
        if (c.stalled == 0 || (c.fsr & r::FSR_FAULT)) {
            c.resumes_ignored.inc();
            if (tracer.narrating()) tracer.narrate(at, who, "RESUME of cb" + std::to_string(cbi) + " ignored");
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
        if (tracer.narrating())
            tracer.narrate(at, who, std::string("RESUME of cb") + std::to_string(cbi) + (retry ? ": retry" : ": terminate"));
    }

    // One register access; false: malformed (size, alignment, range).
    bool access(tlm::tlm_generic_payload& gp, sc_time at, sc_time& extra, bool timed) {
        const std::uint64_t off = gp.get_address();
        const unsigned len = gp.get_data_length();
        if ((len != 4 && len != 8) || off % len != 0 || gp.get_byte_enable_ptr() || gp.get_streaming_width() < len) {
            gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
            return false;
        }
        if (off >= r::kSize) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return false;
        }
        unsigned char* data = gp.get_data_ptr();
        bool known = true;
        const std::uint64_t base = off & ~7ull;
        if (gp.is_read()) {
            std::uint64_t v;
            if (is64(base)) {
                v = read64(base);
                if (len == 4) v = (off & 4) ? v >> 32 : v & 0xffffffffu;
            } else if (len == 8) {
                v = read32(off, known) | (static_cast<std::uint64_t>(read32(off + 4, known)) << 32);
            } else {
                v = read32(off, known);
            }
            std::memcpy(data, &v, len);
        } else if (gp.is_write()) {
            std::uint64_t v = 0;
            std::memcpy(&v, data, len);
            if (is64(base)) {
                const std::uint64_t o = base % r::kPage;
                const bool action = is_cb(base) && (o == r::TLBIVA || o == r::TLBIVAA);
                if (len == 8) {
                    write64(base, v, extra);
                } else if (action) {
                    if (!(off & 4)) write64(base, v, extra);   // low half acts; high half alone is ignored
                } else {
                    const std::uint64_t cur = read64(base);
                    write64(base, (off & 4) ? (cur & 0xffffffffu) | (v << 32) : (cur & ~0xffffffffull) | v, extra);
                }
            } else if (len == 8) {
                write32(off, static_cast<std::uint32_t>(v), at, extra, known);
                write32(off + 4, static_cast<std::uint32_t>(v >> 32), at, extra, known);
            } else {
                write32(off, static_cast<std::uint32_t>(v), at, extra, known);
            }
        }
        if (!known && timed) unknown_regs.inc();
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return true;
    }
};

// ---------------------------------------------------------------- Smmu500

SmmuParams::SmmuParams()
    : set("smmu", "ARM CoreLink MMU-500 SMMU in front of the PL masters (stage 1, 4 KiB granule)"),
      enabled(set.boolean("enabled", "true",
                          "put the SMMU in the PLDMA's memory path (false: the PLDMA reaches memory directly "
                          "with physical addresses)")),
      tbus(set.integer("tbus", "6", "translation buffer units, one target socket each (ZynqMP: TBU0-TBU5, Xilinx UG1085)")
               .range("1", "32")),
      clock(set.frequency("clock", "533MHz",
                          "SMMU clock (*estimate*: ZynqMP FPD interconnect clock; ARM DDI 0517 gives latencies in clocks)")
                .range("1MHz", "5GHz")),
      tlb_hit_cycles(set.integer("tlb-hit-cycles", "2",
                                 "TBU latency of a micro-TLB hit, also paid by bypassed transactions (ARM DDI 0517: 2 clocks, "
                                 "3 with register slices)")
                         .range("0", "1000")),
      macro_tlb_hit_cycles(set.integer("macro-tlb-hit-cycles", "4",
                                       "extra clocks of a micro-TLB miss that hits in the TCU's macro-TLB (*estimate*)")
                               .range("0", "1000")),
      micro_tlb_entries(set.integer("micro-tlb-entries", "32",
                                    "micro-TLB entries per TBU, fully associative (*estimate*: an Intel Agilex 7 MMU-500 "
                                    "configuration; ZynqMP sizes are unpublished)")
                            .range("1", "4096")),
      macro_tlb_entries(set.integer("macro-tlb-entries", "512",
                                    "macro-TLB entries in the TCU (*estimate*: an Intel Agilex 7 MMU-500 configuration)")
                            .range("1", "65536")),
      macro_tlb_ways(set.integer("macro-tlb-ways", "4",
                                 "macro-TLB associativity; entries must be a multiple of it (*estimate*, ARM DDI 0517 makes it "
                                 "a configuration option)")
                         .range("1", "65536")),
      tlb_replacement(set.choice("tlb-replacement", "lru", {"lru", "round-robin"},
                                 "replacement policy of the micro- and macro-TLBs (*estimate*: not documented by ARM)")),
      walk_cache_entries(set.integer("walk-cache-entries", "64",
                                     "TCU walk cache entries (level 0-2 table descriptors), fully associative, LRU "
                                     "(*estimate*: a configuration option in ARM DDI 0517)")
                             .range("0", "65536")),
      walks_per_tbu(set.integer("walks-per-tbu", "8",
                                "page-table walks in flight per TBU; further misses wait for a slot (ARM DDI 0517)")
                        .range("1", "128")),
      tlbi_time(set.time("tlbi-time", "100ns",
                         "time one invalidation command (TLBIVA, TLBIVAA, TLBIASID, TLBIALL, TLBIALLNSNH) takes, "
                         "returned in the register write's delay (*estimate*: ~50 SMMU clocks to reach the TCU and "
                         "every TBU)")
                    .range("0ps", "1ms")),
      register_latency(set.time("register-latency", "20ns",
                                "latency of one register access inside the SMMU's programming interface (*estimate*)")
                           .range("0ps", "10us")) {}

void Smmu500::declare_params(ParamRegistry& reg) {
    reg.add(params_of<SmmuParams>().set);
}

bool Smmu500::enabled_in(const Config& cfg) { return cfg[params_of<SmmuParams>().enabled]; }

void Smmu500::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("smmu_translations",
                     "Transactions translated by the SMMUs' context banks (sum of `*.translated`; 0 with "
                     "`smmu.enabled = false`).",
                     {"translated"}, Smmu500::enabled_in);
    reg.hit_rate("smmu_micro_tlb_hit_rate",
                 "Micro-TLB hits over hits + misses, all TBUs of all nodes (0 with no lookups, e.g. "
                 "`smmu.enabled = false`).",
                 "micro_tlb_hits", "micro_tlb_misses", Smmu500::enabled_in);
    reg.sum_counters("smmu_macro_tlb_hits",
                     "Macro-TLB (TCU) hits (sum of `*.macro_tlb_hits`).",
                     {"macro_tlb_hits"}, Smmu500::enabled_in);
    reg.sum_counters("smmu_walks",
                     "Page-table walks by the TCUs (sum of `*.tcu.walks`).",
                     {"tcu.walks"}, Smmu500::enabled_in);
    reg.sum_counters("smmu_walk_reads",
                     "Descriptor reads of those walks: 3 per walk of a 2 MiB block, 4 of a 4 KiB page, fewer "
                     "on walk-cache hits (sum of `*.tcu.walk_reads`).",
                     {"tcu.walk_reads"}, Smmu500::enabled_in);
    reg.sum_counters("smmu_faults",
                     "SMMU faults recorded by the context banks: translation + access flag + permission + "
                     "external.",
                     {"faults_translation", "faults_access_flag", "faults_permission", "faults_external"}, Smmu500::enabled_in);
    reg.sum_counters("faults_smmu_read",
                     "SMMU faults of reads (FSYNR0.WNR = 0).",
                     {"faults_read"}, Smmu500::enabled_in);
    reg.sum_counters("faults_smmu_write",
                     "SMMU faults of writes (FSYNR0.WNR = 1).",
                     {"faults_write"}, Smmu500::enabled_in);
}

Smmu500::Smmu500(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group)
    : sc_module(name), out("out"), walk("walk"), regs("regs") {
    impl_ = std::make_unique<Impl>(*this, ctx, group);
    for (unsigned i = 0; i < impl_->ntbu; ++i) {
        const std::string n = "tbu" + std::to_string(i);
        tbu.push_back(std::make_unique<tlm_utils::passthrough_target_socket_tagged_optional<Smmu500>>(n.c_str()));
        tbu.back()->register_b_transport(this, &Smmu500::tbu_transport, static_cast<int>(i));
        tbu.back()->register_transport_dbg(this, &Smmu500::tbu_debug, static_cast<int>(i));
    }
    regs.register_b_transport(this, &Smmu500::regs_transport);
    regs.register_transport_dbg(this, &Smmu500::regs_debug);
}

Smmu500::~Smmu500() = default;

bool Smmu500::context_irq(unsigned n) const { return n < kContextBanks && impl_->cb_irq(n); }

void Smmu500::tbu_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    impl_->serve(static_cast<unsigned>(id), gp, delay);
}

unsigned int Smmu500::tbu_debug(int id, tlm::tlm_generic_payload& gp) {
    (void)id;
    return impl_->debug(gp);
}

void Smmu500::regs_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    impl_->transactions.inc();
    impl_->reg_accesses.inc();
    delay += impl_->reg_latency;
    sc_time extra = SC_ZERO_TIME;
    impl_->access(gp, sc_core::sc_time_stamp() + delay, extra, true);
    delay += extra;
}

unsigned int Smmu500::regs_debug(tlm::tlm_generic_payload& gp) {
    sc_time extra = SC_ZERO_TIME;
    return impl_->access(gp, sc_core::sc_time_stamp(), extra, false) ? gp.get_data_length() : 0;
}

}  // namespace vrdmasim
