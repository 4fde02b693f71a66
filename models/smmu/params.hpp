// The MMU-500 model's parameters (section "smmu", declared in
// Smmu500::declare_params), read once into one struct by SmmuConfig::read
// next to that declaration in smmu500.cpp. Latencies given in SMMU clocks
// are converted to times here.
#pragma once

#include <systemc>

#include "src/core/context.hpp"
#include "models/smmu/translation.hpp"

namespace vrdmasim {

struct SmmuConfig {
    unsigned tbus = 0;
    sc_core::sc_time tlb_hit;   // tlb-hit-cycles
    sc_core::sc_time macro_tlb_hit;   // macro-tlb-hit-cycles
    sc_core::sc_time tlbi_time;
    sc_core::sc_time register_latency;
    unsigned micro_tlb_entries = 0;
    unsigned macro_tlb_entries = 0;   // a multiple of macro_tlb_ways
    unsigned macro_tlb_ways = 0;
    TlbReplacement replacement = TlbReplacement::Lru;
    unsigned walk_cache_entries = 0;
    unsigned walks_per_tbu = 0;

    // Every ctx.config read of the model; ConfigError on an inconsistent set.
    static SmmuConfig read(const SimContext& ctx);
};

}   // namespace vrdmasim
