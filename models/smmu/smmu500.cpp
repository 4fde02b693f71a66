// Smmu500: the module that wires the MMU-500's parts together (sockets,
// parameters, top-level statistics). Each concept has its own file: see the
// "Files" section of models/smmu/README.md.
#include "models/smmu/smmu500.hpp"

#include <stdexcept>

#include "models/smmu/context_bank.hpp"
#include "models/smmu/fault.hpp"
#include "models/smmu/invalidation.hpp"
#include "models/smmu/params.hpp"
#include "models/smmu/registers.hpp"
#include "models/smmu/stream_match.hpp"
#include "models/smmu/tbu.hpp"
#include "models/smmu/tcu.hpp"

namespace vrdmasim {

using sc_core::sc_time;

struct Smmu500::Impl {
    const SmmuParams p;
    Counter &transactions, &missing_sid, &unmatched;
    ContextBanks cbs;
    StreamMatcher streams;
    Tcu tcu;            // before `faults`: trace track order
    FaultUnit faults;
    std::vector<std::unique_ptr<Tbu>> tbus;
    Invalidator tlbi;
    RegisterFile regs;

    Impl(Smmu500& m, const SimContext& ctx, const std::string& group)
        : p(SmmuParams::read(ctx)),
          transactions(ctx.stats.counter(stat(m, "transactions"), "",
                                         "timed transactions served (TBU transactions + register accesses)")),
          missing_sid(ctx.stats.counter(stat(m, "missing_stream_id"), "",
                                        "transactions without a StreamIdExtension (master's bug; error response)")),
          unmatched(ctx.stats.counter(stat(m, "unmatched_streams"), "",
                                      "transactions whose stream ID matched no valid SMR")),
          cbs(ctx.stats, m.name()),
          tcu(p, ctx, group, m.name(), m.walk),
          faults(ctx, group, m.name(), m.irq, cbs, streams),
          tlbi(cbs, tbus, tcu, ctx.stats, m.name()),
          regs(p, ctx.stats, m.name(), cbs, streams, faults, tlbi) {
        const TbuShared shared{cbs, streams, tcu, faults, m.out, p.tlb_hit, p.macro_tlb_hit,
                               transactions, missing_sid, unmatched};
        for (unsigned i = 0; i < p.tbus; ++i)
            tbus.push_back(std::make_unique<Tbu>(shared, ctx.stats, stat(m, "tbu" + std::to_string(i)), p));
    }

    static std::string stat(const Smmu500& m, const std::string& s) { return std::string(m.name()) + "." + s; }
};

// ---------------------------------------------------------------- parameters

void Smmu500::declare_params(ParamRegistry& reg) {
    reg.section("smmu", "ARM CoreLink MMU-500 SMMU in front of the PL masters (stage 1, 4 KiB granule)")
        .boolean("enabled", "true",
                 "put the SMMU in the PLDMA's memory path (false: the PLDMA reaches memory directly "
                 "with physical addresses)")
        .integer("tbus", "6", "translation buffer units, one target socket each (ZynqMP: TBU0-TBU5, Xilinx UG1085)")
        .range("1", "32")
        .frequency("clock", "533MHz",
                   "SMMU clock (*estimate*: ZynqMP FPD interconnect clock; ARM DDI 0517 gives latencies in clocks)")
        .range("1MHz", "5GHz")
        .integer("tlb-hit-cycles", "2",
                 "TBU latency of a micro-TLB hit, also paid by bypassed transactions (ARM DDI 0517: 2 clocks, "
                 "3 with register slices)")
        .range("0", "1000")
        .integer("macro-tlb-hit-cycles", "4",
                 "extra clocks of a micro-TLB miss that hits in the TCU's macro-TLB (*estimate*)")
        .range("0", "1000")
        .integer("micro-tlb-entries", "32",
                 "micro-TLB entries per TBU, fully associative (*estimate*: an Intel Agilex 7 MMU-500 "
                 "configuration; ZynqMP sizes are unpublished)")
        .range("1", "4096")
        .integer("macro-tlb-entries", "512",
                 "macro-TLB entries in the TCU (*estimate*: an Intel Agilex 7 MMU-500 configuration)")
        .range("1", "65536")
        .integer("macro-tlb-ways", "4",
                 "macro-TLB associativity; entries must be a multiple of it (*estimate*, ARM DDI 0517 makes it "
                 "a configuration option)")
        .range("1", "65536")
        .choice("tlb-replacement", "lru", {"lru", "round-robin"},
                "replacement policy of the micro- and macro-TLBs (*estimate*: not documented by ARM)")
        .integer("walk-cache-entries", "64",
                 "TCU walk cache entries (level 0-2 table descriptors), fully associative, LRU "
                 "(*estimate*: a configuration option in ARM DDI 0517)")
        .range("0", "65536")
        .integer("walks-per-tbu", "8",
                 "page-table walks in flight per TBU; further misses wait for a slot (ARM DDI 0517)")
        .range("1", "128")
        .time("tlbi-time", "100ns",
              "time one invalidation command (TLBIVA, TLBIVAA, TLBIASID, TLBIALL, TLBIALLNSNH) takes, "
              "returned in the register write's delay (*estimate*: ~50 SMMU clocks to reach the TCU and "
              "every TBU)")
        .range("0ps", "1ms")
        .time("register-latency", "20ns",
              "latency of one register access inside the SMMU's programming interface (*estimate*)")
        .range("0ps", "10us");
}

namespace {
sc_time smmu_cycles(const SimContext& ctx, std::int64_t n) {
    const double ps = 1e12 / ctx.config.frequency_hz("smmu.clock");
    return sc_time::from_value(static_cast<sc_dt::uint64>(static_cast<double>(n) * ps + 0.5));
}
}  // namespace

SmmuParams SmmuParams::read(const SimContext& ctx) {
    const auto& c = ctx.config;
    SmmuParams p;
    p.tbus = static_cast<unsigned>(c.integer("smmu.tbus"));
    p.tlb_hit = smmu_cycles(ctx, c.integer("smmu.tlb-hit-cycles"));
    p.macro_tlb_hit = smmu_cycles(ctx, c.integer("smmu.macro-tlb-hit-cycles"));
    p.tlbi_time = c.time("smmu.tlbi-time");
    p.register_latency = c.time("smmu.register-latency");
    const auto e = c.integer("smmu.macro-tlb-entries");
    const auto w = c.integer("smmu.macro-tlb-ways");
    if (w > e || e % w != 0)
        throw ConfigError("smmu.macro-tlb-entries (" + std::to_string(e) + ") must be a multiple of smmu.macro-tlb-ways (" +
                          std::to_string(w) + ")");
    p.macro_tlb_entries = static_cast<unsigned>(e);
    p.macro_tlb_ways = static_cast<unsigned>(w);
    p.replacement = parse_replacement(c.string("smmu.tlb-replacement"));
    p.walk_cache_entries = static_cast<unsigned>(c.integer("smmu.walk-cache-entries"));
    p.micro_tlb_entries = static_cast<unsigned>(c.integer("smmu.micro-tlb-entries"));
    p.walks_per_tbu = static_cast<unsigned>(c.integer("smmu.walks-per-tbu"));
    return p;
}

// ---------------------------------------------------------------- Smmu500

Smmu500::Smmu500(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group)
    : sc_module(name), out("out"), walk("walk"), regs("regs") {
    impl_ = std::make_unique<Impl>(*this, ctx, group);
    for (unsigned i = 0; i < impl_->p.tbus; ++i) {
        const std::string n = "tbu" + std::to_string(i);
        tbu.push_back(std::make_unique<tlm_utils::passthrough_target_socket_tagged_optional<Smmu500>>(n.c_str()));
        tbu.back()->register_b_transport(this, &Smmu500::tbu_transport, static_cast<int>(i));
        tbu.back()->register_transport_dbg(this, &Smmu500::tbu_debug, static_cast<int>(i));
    }
    regs.register_b_transport(this, &Smmu500::regs_transport);
    regs.register_transport_dbg(this, &Smmu500::regs_debug);
}

Smmu500::~Smmu500() = default;

bool Smmu500::context_irq(unsigned n) const { return n < kContextBanks && impl_->cbs[n].irq_asserted(); }

void Smmu500::tbu_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    impl_->tbus[static_cast<unsigned>(id)]->serve(gp, delay);
}

unsigned int Smmu500::tbu_debug(int id, tlm::tlm_generic_payload& gp) {
    return impl_->tbus[static_cast<unsigned>(id)]->debug(gp);
}

void Smmu500::regs_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    impl_->transactions.inc();
    impl_->regs.transport(gp, delay);
}

unsigned int Smmu500::regs_debug(tlm::tlm_generic_payload& gp) { return impl_->regs.debug(gp); }

}  // namespace vrdmasim
