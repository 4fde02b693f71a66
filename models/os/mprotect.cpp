// mprotect (mm/mprotect.c): a range's VMAs and leaves given a new
// protection; PROT_NONE keeps the frame behind a non-present descriptor
// (pgtable.hpp kSwProtNone), a block partly in the range is split.
#include "models/os/huge_memory.hpp"
#include "models/os/memory.hpp"
#include "models/os/mmap.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/mprotect.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/syscall.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {

using namespace mm;
using namespace aarch64;

namespace {

// The descriptor d with protection prot.
std::uint64_t with_prot(std::uint64_t d, Prot prot) {
    if (prot == Prot::None) return (d & ~kValid) | kSwProtNone;
    const std::uint64_t nd = (d | kValid) & ~kSwProtNone;
    return can_write(prot) ? (nd & ~kApReadOnly) : (nd | kApReadOnly);
}

}   // namespace

namespace mm {

void rewrite_leaves(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, Work& w, const LeafRewrite& rewrite,
                    bool track) {
    std::uint64_t a = va;
    while (a < end) {
        std::uint64_t slot = 0;
        int level = 0;
        const std::uint64_t d = leaf(m, p, a, &slot, &level);
        const std::uint64_t base = align_down(a, kHuge);
        if (!slot || (level == 2 && !has_frame(d))) {
            a = base + kHuge;
            continue;
        }
        if (level == 2 && (a != base || end < base + kHuge)) {
            tell(m, w, p.pid, base, [&] {
                return "the range covers only part of the 2 MiB huge page at " + Tracer::hex(base) +
                       ": it is split into 4 KiB pages first";
            });
            split_block(m, p, base, w);
            continue;
        }
        if (has_frame(d)) {
            const std::uint64_t nd = rewrite(d, a);
            if (nd != d) {
                wr(m, slot, nd);
                if (track) res_set(m, p.pid, level == 2 ? base : align_down(a, kPage), (nd & kValid) != 0);
                w.cpu += m.params.pte_update;
            }
        }
        a = level == 2 ? base + kHuge : align_down(a, kPage) + kPage;
    }
}

}   // namespace mm

VmResult Vm::mprotect(int pid, std::uint64_t va, std::uint64_t len, Prot prot, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at, Range::Aligned, va, len, true);
        e != VmError::Ok)
        return call_return(m, c, e);
    Process* p = c.p;
    const std::uint64_t end = c.end;
    len = end - va;
    if (can_write(prot) && maps_file(*p, va, end)) return call_return(m, c, VmError::Access);   // read-only files
    m.stats.mprotects.inc();
    settle(m, *p, va, end, c.w);   // a collapse in the range is completed first
    modify_vmas(*p, va, end, [&](std::uint64_t, Vma& v) { v.prot = prot; });
    rewrite_leaves(
        m, *p, va, end, c.w, [prot](std::uint64_t d, std::uint64_t) { return with_prot(d, prot); }, true);
    VmResult r = call_return(m, c, VmError::Ok);
    r.done = invalidate(m, *p, va, len, r.done);
    return r;
}

}   // namespace vrdmasim
