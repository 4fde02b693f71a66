// Transparent huge pages at fault time and their splitting (huge_memory.hpp;
// Linux's mm/huge_memory.c, Documentation/admin-guide/mm/transhuge.rst).
#include "models/os/huge_memory.hpp"

#include <stdexcept>

#include "models/os/page_alloc.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

using namespace aarch64;

bool thp_allowed(const Mm& m, const Vma& v) {
    if (v.file >= 0) return false;   // file mappings are 4 KiB pages of the page cache (no file THP)
    if (v.advice == HugeAdvice::NoHuge) return false;
    if (m.params.thp == "always") return true;
    if (m.params.thp == "madvise") return v.advice == HugeAdvice::Huge;
    return false;
}

bool huge_fault(Mm& m, Process& p, const Vma& v, std::uint64_t vstart, std::uint64_t va, std::uint64_t at, int level,
                Work& w, std::uint64_t& next, VmError& e) {
    const std::uint64_t base = align_down(va, kHuge);
    if (!(thp_allowed(m, v) && base >= vstart && base + kHuge <= v.end)) return false;
    bool empty = true;
    std::uint64_t old_table = 0;
    if (at && level == 3) {   // a page table exists: a block may replace it only if it is empty
        old_table = at & ~(kPage - 1);
        for (unsigned i = 0; i < 512 && empty; ++i) empty = rd(m, old_table + 8ull * i) == 0;
    }
    if (!empty) return false;
    auto pa = m.frames.free_pages() >= 512 + kTableReserve ? m.frames.alloc(FrameAllocator::kMaxOrder) : std::nullopt;
    if (!pa) return false;
    low_check(m);
    zero(m, *pa, kHuge);
    try {
        p.pt->map_block(base, *pa, attrs(v));
    } catch (const OutOfFrames&) {
        free_frame(m, *pa, FrameAllocator::kMaxOrder);
        e = VmError::NoMemory;
        return true;
    }
    res_set(m, p.pid, base, true);
    if (old_table) free_frame(m, old_table, 0);
    m.stats.faults_huge.inc();
    m.stats.zero_fills.inc(512);
    m.stats.pages_mapped.inc(512);
    w.cpu += m.params.minor_fault + m.params.huge_zero_fill + m.params.pte_update;
    w.faulted += 512;
    tell(m, w, p.pid, base, [&] {
        return "huge-page fault at " + Tracer::hex(va) +
               ": transparent huge pages allowed, a zero-filled 2 MiB block " + Tracer::hex(*pa) + " is mapped at " +
               Tracer::hex(base);
    });
    next = base + kHuge;
    e = VmError::Ok;
    return true;
}

void split_block(Mm& m, Process& p, std::uint64_t base, Work& w) {
    int level = 0;
    const std::uint64_t at = leaf_slot(m, p, base, level);
    const std::uint64_t d = rd(m, at);
    if (level != 2 || !has_frame(d)) throw std::logic_error("Vm: no block to split");
    const std::uint64_t pa = d & kAddrMask;
    const std::uint64_t low = d & ~kAddrMask;
    split_frame(m, pa);
    const std::uint64_t table = alloc_table(m);
    for (unsigned i = 0; i < 512; ++i) wr(m, table + 8ull * i, (pa + i * kPage) | low | kTableOrPage);
    wr(m, at, table | kValid | kTableOrPage);
    res_set(m, p.pid, base, false);
    if (d & kValid)
        for (unsigned i = 0; i < 512; ++i) res_set(m, p.pid, base + i * kPage, true);
    m.stats.huge_splits.inc();
    w.cpu += m.params.pte_update * 512;
}

}   // namespace mm
}   // namespace vrdmasim
