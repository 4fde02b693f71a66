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
    const SmmuConfig p;
    Counter &transactions, &missing_sid, &unmatched;
    ContextBanks cbs;
    StreamMatcher streams;
    Tcu tcu;   // before `faults`: trace track order
    FaultUnit faults;
    std::vector<std::unique_ptr<Tbu>> tbus;
    Invalidator tlbi;
    RegisterFile regs;

    Impl(Smmu500& m, const SimContext& ctx, const std::string& group)
        : p(SmmuConfig::read(ctx)),
          transactions(ctx.stats.counter(stat(m, "transactions"), "",
                                         "timed transactions served (TBU transactions + register accesses)")),
          missing_sid(ctx.stats.counter(stat(m, "missing_stream_id"), "",
                                        "transactions without a StreamIdExtension (master's bug; error response)")),
          unmatched(
              ctx.stats.counter(stat(m, "unmatched_streams"), "", "transactions whose stream ID matched no valid SMR")),
          cbs(ctx.stats, m.name()),
          tcu(p, ctx, group, m.name(), m.walk),
          faults(ctx, group, m.name(), m.irq, cbs, streams),
          tlbi(cbs, tbus, tcu, ctx.stats, m.name()),
          regs(p, ctx.stats, m.name(), cbs, streams, faults, tlbi) {
        const TbuShared shared{cbs,       streams,         tcu,          faults,      m.out,
                               p.tlb_hit, p.macro_tlb_hit, transactions, missing_sid, unmatched};
        for (unsigned i = 0; i < p.tbus; ++i)
            tbus.push_back(std::make_unique<Tbu>(shared, ctx.stats, stat(m, "tbu" + std::to_string(i)), p));
    }

    static std::string stat(const Smmu500& m, const std::string& s) { return std::string(m.name()) + "." + s; }
};

// ---------------------------------------------------------------- parameters

SmmuParams::SmmuParams()
    : set("smmu", "ARM CoreLink MMU-500 SMMU in front of the PL masters (stage 1, 4 KiB granule)"),
      enabled(set.boolean("enabled", "true",
                          "put the SMMU in the PLDMA's memory path (false: the PLDMA reaches memory directly "
                          "with physical addresses)")),
      tbus(set.integer("tbus", "6",
                       "translation buffer units, one target socket each (ZynqMP: TBU0-TBU5, Xilinx UG1085)")
               .range("1", "32")),
      clock(set.frequency(
                   "clock", "533MHz",
                   "SMMU clock (*estimate*: ZynqMP FPD interconnect clock; ARM DDI 0517 gives latencies in clocks)")
                .range("1MHz", "5GHz")),
      tlb_hit_cycles(
          set.integer("tlb-hit-cycles", "2",
                      "TBU latency of a micro-TLB hit, also paid by bypassed transactions (ARM DDI 0517: 2 clocks, "
                      "3 with register slices)")
              .range("0", "1000")),
      macro_tlb_hit_cycles(set.integer("macro-tlb-hit-cycles", "4",
                                       "extra clocks of a micro-TLB miss that hits in the TCU's macro-TLB (*estimate*)")
                               .range("0", "1000")),
      micro_tlb_entries(
          set.integer("micro-tlb-entries", "32",
                      "micro-TLB entries per TBU, fully associative (*estimate*: an Intel Agilex 7 MMU-500 "
                      "configuration; ZynqMP sizes are unpublished)")
              .range("1", "4096")),
      macro_tlb_entries(
          set.integer("macro-tlb-entries", "512",
                      "macro-TLB entries in the TCU (*estimate*: an Intel Agilex 7 MMU-500 configuration)")
              .range("1", "65536")),
      macro_tlb_ways(
          set.integer("macro-tlb-ways", "4",
                      "macro-TLB associativity; entries must be a multiple of it (*estimate*, ARM DDI 0517 makes it "
                      "a configuration option)")
              .range("1", "65536")),
      tlb_replacement(
          set.choice("tlb-replacement", "lru", {"lru", "round-robin"},
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

void Smmu500::declare_params(ParamRegistry& reg) { reg.add(params_of<SmmuParams>().set); }

bool Smmu500::enabled_in(const Config& cfg) {
    // ni.translation = shadow (NetVM's NI, models/dma) puts no SMMU on the
    // engine's path: none is built although the processes live in a Vm.
    const bool shadow = cfg.registry().find("ni.translation") && cfg.string("ni.translation") == "shadow";
    return cfg[params_of<SmmuParams>().enabled] && !shadow;
}

void Smmu500::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("smmu_translations",
                     "Transactions translated by the SMMUs' context banks (sum of `*.translated`; 0 with "
                     "`smmu.enabled = false`).",
                     {"translated"}, Smmu500::enabled_in);
    reg.hit_rate("smmu_micro_tlb_hit_rate",
                 "Micro-TLB hits over hits + misses, all TBUs of all nodes (0 with no lookups, e.g. "
                 "`smmu.enabled = false`).",
                 "micro_tlb_hits", "micro_tlb_misses", Smmu500::enabled_in);
    reg.sum_counters("smmu_macro_tlb_hits", "Macro-TLB (TCU) hits (sum of `*.macro_tlb_hits`).", {"macro_tlb_hits"},
                     Smmu500::enabled_in);
    reg.sum_counters("smmu_walks", "Page-table walks by the TCUs (sum of `*.tcu.walks`).", {"tcu.walks"},
                     Smmu500::enabled_in);
    reg.sum_counters("smmu_walk_reads",
                     "Descriptor reads of those walks: 3 per walk of a 2 MiB block, 4 of a 4 KiB page, fewer "
                     "on walk-cache hits (sum of `*.tcu.walk_reads`).",
                     {"tcu.walk_reads"}, Smmu500::enabled_in);
    reg.sum_counters("smmu_faults",
                     "SMMU faults recorded by the context banks: translation + access flag + permission + "
                     "external.",
                     {"faults_translation", "faults_access_flag", "faults_permission", "faults_external"},
                     Smmu500::enabled_in);
    reg.sum_counters("faults_smmu_read", "SMMU faults of reads (FSYNR0.WNR = 0).", {"faults_read"},
                     Smmu500::enabled_in);
    reg.sum_counters("faults_smmu_write", "SMMU faults of writes (FSYNR0.WNR = 1).", {"faults_write"},
                     Smmu500::enabled_in);
}

namespace {
sc_time smmu_cycles(const SimContext& ctx, std::int64_t n) {
    const double ps = 1e12 / ctx.config[params_of<SmmuParams>().clock];
    return sc_time::from_value(static_cast<sc_dt::uint64>(static_cast<double>(n) * ps + 0.5));
}
}   // namespace

SmmuConfig SmmuConfig::read(const SimContext& ctx) {
    const auto& c = ctx.config;
    SmmuConfig p;
    p.tbus = static_cast<unsigned>(c[params_of<SmmuParams>().tbus]);
    p.tlb_hit = smmu_cycles(ctx, c[params_of<SmmuParams>().tlb_hit_cycles]);
    p.macro_tlb_hit = smmu_cycles(ctx, c[params_of<SmmuParams>().macro_tlb_hit_cycles]);
    p.tlbi_time = c[params_of<SmmuParams>().tlbi_time];
    p.register_latency = c[params_of<SmmuParams>().register_latency];
    const auto e = c[params_of<SmmuParams>().macro_tlb_entries];
    const auto w = c[params_of<SmmuParams>().macro_tlb_ways];
    if (w > e || e % w != 0)
        throw ConfigError("smmu.macro-tlb-entries (" + std::to_string(e) +
                          ") must be a multiple of smmu.macro-tlb-ways (" + std::to_string(w) + ")");
    p.macro_tlb_entries = static_cast<unsigned>(e);
    p.macro_tlb_ways = static_cast<unsigned>(w);
    p.replacement = parse_replacement(c[params_of<SmmuParams>().tlb_replacement]);
    p.walk_cache_entries = static_cast<unsigned>(c[params_of<SmmuParams>().walk_cache_entries]);
    p.micro_tlb_entries = static_cast<unsigned>(c[params_of<SmmuParams>().micro_tlb_entries]);
    p.walks_per_tbu = static_cast<unsigned>(c[params_of<SmmuParams>().walks_per_tbu]);
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

bool Smmu500::context_irq(unsigned n, sc_core::sc_time at) const {
    return n < kContextBanks && impl_->cbs.peek(n).irq_asserted(at);
}

bool Smmu500::may_stall() const { return impl_->cbs.stall_mode_seen(); }

Tracer::Cause Smmu500::fault_story(unsigned n, sc_core::sc_time at) const {
    return n < kContextBanks ? impl_->cbs.peek(n).fault_story_at(at) : Tracer::Cause{};
}

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

}   // namespace vrdmasim
