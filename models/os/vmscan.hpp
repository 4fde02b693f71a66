// Reclaim and swap (mm/vmscan.c, mm/swapfile.c): the LRU of resident
// leaves, the second-chance clock that swaps old pages out to the swap
// Ssd, and the batch of changes a pass applies at its end (notifier, swap
// writes, frames freed). Swap-in is on the fault path (memory.cpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <systemc>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// The LRU: leaf (pid, va) made valid or not; a range of them gone.
void res_set(Mm& m, int pid, std::uint64_t va, bool valid);
void res_clear(Mm& m, int pid, std::uint64_t va, std::uint64_t end);

// Changes made by a reclaim or migration pass, applied in order by
// complete(): invalidate (notifier) -> swap writes -> frames freed.
struct Batch {
    struct Inv {
        int pid;
        std::uint64_t va, len;
    };
    std::vector<Inv> invs;
    std::vector<std::pair<std::uint64_t, std::vector<unsigned char>>> writes;   // slot, bytes
    std::vector<std::uint64_t> frees;   // order-0 frames
    std::uint64_t evicted = 0;
    void inv(int pid, std::uint64_t va, std::uint64_t len) {
        if (!invs.empty() && invs.back().pid == pid && invs.back().va + invs.back().len == va) invs.back().len += len;
        else invs.push_back({pid, va, len});
    }
};

// Apply b from t; the time the last swap write ends.
sc_core::sc_time complete(Mm& m, Batch& b, sc_core::sc_time t);
// The clock: evict until free + pending frees >= target_pages (see vmscan.cpp).
void scan(Mm& m, std::uint64_t target_pages, Batch& b, Work& w);

}   // namespace mm
}   // namespace vrdmasim
