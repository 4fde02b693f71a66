// Frame allocation for the Vm (page_alloc.hpp): the page-table reserve,
// direct reclaim and the watermarks (mm/page_alloc.c).
#include "models/os/page_alloc.hpp"

#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

std::optional<std::uint64_t> alloc_page(Mm& m, Work& w) {
    // A user page never takes the last kTableReserve frames: those stay
    // for page tables (splitting a huge page to reclaim it needs one), as
    // Linux keeps its min watermark for the kernel's own allocations.
    auto pa = m.frames.free_pages() > kTableReserve ? m.frames.alloc(0) : std::nullopt;
    if (!pa && m.ssd) {
        m.stats.direct_reclaims.inc();
        Batch b;
        scan(m, m.frames.free_pages() + m.params.direct_reclaim_pages, b, w);
        const sc_core::sc_time t0 = w.at + w.cpu + w.io;
        w.io += complete(m, b, t0) - t0;
        if (m.frames.free_pages() > kTableReserve) pa = m.frames.alloc(0);
    }
    if (pa) low_check(m);
    return pa;
}

void low_check(Mm& m) {
    if (m.low_memory && m.frames.free_pages() * kPage < m.params.low_wm) m.low_memory();
}

void free_frame(Mm& m, std::uint64_t pa, unsigned order) {
    m.frames.free(pa, order);
    m.stats.frames_freed.inc(1ull << order);
}

void split_frame(Mm& m, std::uint64_t pa) {
    for (unsigned o = FrameAllocator::kMaxOrder; o >= 1; --o)
        for (std::uint64_t b = pa; b < pa + kHuge; b += kPage << o) m.frames.split(b, o);
}

}   // namespace mm

void Vm::set_low_memory(std::function<void()> fn) { mm_->low_memory = std::move(fn); }
std::uint64_t Vm::low_watermark() const { return mm_->params.low_wm; }
std::uint64_t Vm::high_watermark() const { return mm_->params.high_wm; }

}   // namespace vrdmasim
