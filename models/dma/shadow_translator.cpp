// The NetVM NI's translation unit (see shadow_translator.hpp; README.md
// "NetVM's network interface").
#include "models/dma/shadow_translator.hpp"

#include <algorithm>
#include <vector>

#include "models/common/smmu_fault.hpp"
#include "models/common/stream_id.hpp"

namespace vrdmasim {

using sc_core::sc_time;

NiTranslationParams::NiTranslationParams()
    : set("ni", ""),
      translation(set.choice("translation", "smmu", {"smmu", "shadow"},
                             "how the engine's memory accesses are translated. smmu: through a TBU of the node's "
                             "SMMU (the thesis's design); shadow: by the NI's own shadow page table, which the OS "
                             "updates on every map, unmap, swap-out and migration, the NI locking each page while it "
                             "accesses it (NetVM: J. S. Ong, \"Network virtual memory\", PhD thesis, UBC); the SMMU is "
                             "then not on the engine's path")),
      lookup(set.time("shadow-lookup", "32ns",
                      "ni.translation = shadow: NI time to translate one page in its shadow table (*estimate*: five "
                      "cycles of the engine's 156.25 MHz clock for a hashed lookup in on-chip memory; NetVM's "
                      "LANai did it in firmware in NI SRAM, slower)")
                 .range("0ps", "10us")),
      credits(set.size("credits", "64KiB",
                       "ni.translation = shadow with rdma.strategy = netvm: bytes of data packets a node may have "
                       "outstanding to each destination node (NetVM's end-to-end credits: spent per packet, "
                       "returned by the receiver once the packet is placed); nodes x ni.credits must fit in "
                       "dma.netvm-buffer, so the system buffer never overflows (*estimate*: a quarter of the "
                       "default buffer, four senders)")
                  .range("512B", "1GiB")) {}

bool shadow_translation(const Config& c) { return c[params_of<NiTranslationParams>().translation] == "shadow"; }

void check_shadow_config(const Config& c, unsigned nodes, bool netvm) {
    if (!shadow_translation(c)) return;
    const std::string why = c.describe("ni.translation");
    if (!c.boolean("smmu.enabled"))
        throw c.refuse("smmu.enabled", why +
                                           " translates the virtual addresses of processes that live in the "
                                           "node's virtual memory, which smmu.enabled = false does not build "
                                           "(physical DMA memory). Leave smmu.enabled = true (the SMMU itself "
                                           "is then not on the engine's path) or set ni.translation = smmu");
    if (c.string("smmu-driver.fault-mode") == "stall")
        throw c.refuse("smmu-driver.fault-mode", why +
                                                     " has no stall mode: a shadow-table miss always ends the "
                                                     "access (terminate semantics) and the OS's outcome reaches the "
                                                     "engine through fault_resolved. Set "
                                                     "smmu-driver.fault-mode = terminate (or leave it out)");
    if (!netvm) return;
    const std::uint64_t credits = c.size("ni.credits"), buffer = c.size("dma.netvm-buffer");
    const std::uint64_t packet = std::min(c.size("dma.packet-size"), c.size("dma.block-size"));
    if (credits < 2 * packet)
        throw c.refuse("ni.credits", "must hold at least two of the largest data packets (" +
                                         c.describe("dma.packet-size") +
                                         "): a receiver returns credits once it "
                                         "owes half of them, so a sender must be able to have one packet out "
                                         "while the other half comes back. Raise ni.credits to at least " +
                                         std::to_string(2 * packet) + "B");
    if (credits * nodes > buffer)
        throw c.refuse("ni.credits", "x " + std::to_string(nodes) +
                                         " nodes (each a sender to every node, itself "
                                         "included) = " +
                                         std::to_string(credits * nodes) +
                                         " B of credit a receiver "
                                         "grants, but " +
                                         c.describe("dma.netvm-buffer") +
                                         " cannot hold that much: "
                                         "the system buffer could overflow. Lower ni.credits to at most " +
                                         std::to_string(buffer / nodes) + "B or raise dma.netvm-buffer to at least " +
                                         std::to_string(credits * nodes) + "B");
}

void ShadowTranslator::declare_params(ParamRegistry& reg) { reg.add(params_of<NiTranslationParams>().set); }

void ShadowTranslator::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("shadow_misses",
                     "Engine accesses that missed in the NI's shadow page table (`ni.shadow_misses`; "
                     "ni.translation = shadow), each reported to the OS like a fault.",
                     {"ni.shadow_misses"}, shadow_translation);
}

ShadowTranslator::ShadowTranslator(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group,
                                   ShadowTable& table)
    : sc_module(name),
      in("in"),
      out("out"),
      ctx_(ctx),
      table_(table),
      lookup_(ctx.config[params_of<NiTranslationParams>().lookup]),
      track_(ctx.tracer.track(group, "dma")),
      lookups_(ctx.stats.counter(group + ".ni.shadow_lookups", "", "pages the NI translated in its shadow table")),
      misses_(ctx.stats.counter(group + ".ni.shadow_misses", "",
                                "accesses that missed in the shadow table (reported to the OS as faults)")),
      locks_(ctx.stats.counter(group + ".ni.page_locks", "", "page locks the NI took while accessing a page")),
      unknown_streams_(ctx.stats.counter(group + ".ni.unknown_streams", "",
                                         "accesses with a stream ID no process was given (refused)")),
      lookup_us_(ctx.stats.scalar(group + ".ni.shadow_lookup_time", "us", "NI time spent in shadow-table lookups",
                                  Scalar::Kind::Sum)) {
    in.register_b_transport(this, &ShadowTranslator::b_transport);
}

void ShadowTranslator::miss(tlm::tlm_generic_payload& gp, std::uint32_t sid, int pid, std::uint64_t va, bool write,
                            bool permission, sc_time at) {
    misses_.inc();
    SmmuFaultExtension* fx = nullptr;
    gp.get_extension(fx);
    if (fx) {
        fx->cb = -1;
        fx->address = va;
        fx->write = write;
        fx->type = permission ? FaultType::Permission : FaultType::Translation;
        fx->level = 3;
    }
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    ctx_.tracer.instant(track_, "shadow miss", at, {{"va", Tracer::json_hex(va)}, {"write", write ? "1" : "0"}});
    if (on_miss_) on_miss_(sid, pid, va, write, at);
}

void ShadowTranslator::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    const std::uint64_t va = gp.get_address();
    const std::uint64_t len = gp.get_data_length();
    const bool write = gp.is_write();
    StreamIdExtension* sx = nullptr;
    gp.get_extension(sx);
    auto owner = sx ? pid_of_.find(sx->sid) : pid_of_.end();
    if (owner == pid_of_.end()) {
        unknown_streams_.inc();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const std::uint32_t sid = sx->sid;
    const int pid = owner->second;
    sc_time t = sc_core::sc_time_stamp() + delay;
    // Translate every page first: a miss anywhere accesses nothing.
    struct Piece {
        std::uint64_t va, pa, len;
    };
    std::vector<Piece> pieces;
    const std::uint64_t end = va + std::max<std::uint64_t>(len, 1);   // a 0-byte probe translates its page
    for (std::uint64_t a = va; a < end;) {
        const std::uint64_t page_end = (a / ShadowTable::kPage + 1) * ShadowTable::kPage;
        const std::uint64_t n = std::min(end, page_end) - a;
        t += lookup_;
        lookups_.inc();
        lookup_us_.add(lookup_.to_seconds() * 1e6);
        const ShadowTable::Entry* e = table_.lookup(pid, a, t);
        if (!e || (write && !e->writable)) {
            delay = t - sc_core::sc_time_stamp();
            miss(gp, sid, pid, a, write, e != nullptr, t);
            return;
        }
        const std::uint64_t pa = e->pa + (a & (e->size - 1));
        if (!pieces.empty() && pieces.back().pa + pieces.back().len == pa) pieces.back().len += n;
        else pieces.push_back({a, pa, n});
        a += n;
    }
    // Then access the physical pieces, each page locked over its access.
    unsigned char* data = gp.get_data_ptr();
    tlm::tlm_generic_payload p;
    p.set_command(gp.get_command());
    p.set_byte_enable_ptr(nullptr);
    p.set_dmi_allowed(false);
    bool ok = true;
    for (const Piece& pc : pieces) {
        if (len == 0) break;   // a probe: translated, nothing to move
        p.set_address(pc.pa);
        p.set_data_ptr(data + (pc.va - va));
        p.set_data_length(static_cast<unsigned>(pc.len));
        p.set_streaming_width(static_cast<unsigned>(pc.len));
        p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        const sc_time start = t;
        sc_time d = t - sc_core::sc_time_stamp();
        out->b_transport(p, d);
        t = sc_core::sc_time_stamp() + d;
        for (std::uint64_t pg = pc.va / ShadowTable::kPage * ShadowTable::kPage; pg < pc.va + pc.len;
             pg += ShadowTable::kPage) {
            table_.lock(pid, pg, start, t);
            locks_.inc();
        }
        if (!p.is_response_ok()) {
            ok = false;
            gp.set_response_status(p.get_response_status());
            break;
        }
    }
    delay = t - sc_core::sc_time_stamp();
    if (ok) gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}   // namespace vrdmasim
