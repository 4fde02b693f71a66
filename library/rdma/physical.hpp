// Physical-address mode ("why pinning exists", README.md): smmu.enabled =
// false with a registration strategy. The processes live in the node's VM
// as with the SMMU, but the engine reaches memory without translation, so
// the library hands it PHYSICAL addresses: at post it looks up the source
// range page by page (one descriptor per physically contiguous run), and
// the destination's physical addresses are those the receiver looked up
// when it registered its area and published (as RDMA libraries exchange
// keys): a snapshot, never looked up again. Pinning keeps those frames in
// place; without pins, reclaim, migration or a THP collapse moves pages and
// the engine reads or writes frames that are no longer the process's.
//
// PhysicalKeys is the system's record of every translation the libraries
// handed an engine (the published destination keys included), which the
// engine-side ownership check (src/sim/frame_check.hpp) consults to tell a
// frame still the process's from one that moved.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/core/context.hpp"
#include "library/rdma/params.hpp"

namespace vrdmasim {

// Whether the run hands the engine physical addresses: smmu.enabled = false
// and a registration strategy that makes the pages present (pins or
// populates them: StrategyKind::makes_present; fault-tolerant keeps today's
// DMA memory without a VM; netvm needs the SMMU and is refused).
bool physical_mode(const Config& c);

class PhysicalKeys {
public:
    // The receiver of `node` (process `pid`) registered the page at
    // `va_page` and found it in the frame at `pa_page`: published for the
    // senders (and noted as handed to the engine).
    void publish(unsigned node, int pid, std::uint64_t va_page, std::uint64_t pa_page);
    // A sender's look-up of destination byte `va` of `node` in the published
    // keys: false if no key covers it.
    bool lookup(unsigned node, std::uint64_t va, std::uint64_t& pa) const;
    // A translation of process `pid` of `node` handed to `node`'s engine
    // (a source page at post, a completion record, the notification ring).
    void handed(unsigned node, int pid, std::uint64_t va_page, std::uint64_t pa_page);
    // Every (pid, va_page) ever handed to `node`'s engine for the frame at
    // `pa_page` (nullptr if none).
    const std::vector<std::pair<int, std::uint64_t>>* handed_at(unsigned node, std::uint64_t pa_page) const;
    // Keys published by `node` (pages).
    std::uint64_t published(unsigned node) const;

private:
    std::map<std::pair<unsigned, std::uint64_t>, std::uint64_t> keys_;   // (node, va page) -> pa page
    std::map<unsigned, std::uint64_t> published_;
    std::vector<std::unordered_map<std::uint64_t, std::vector<std::pair<int, std::uint64_t>>>> handed_;
};

}   // namespace vrdmasim
