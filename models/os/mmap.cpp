// Address spaces (mmap.hpp): VMA lookup and splitting, and the system calls
// that create and remove mappings, mmap and munmap (mm/mmap.c).
#include "models/os/mmap.hpp"

#include <algorithm>

#include "models/os/memory.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/page_alloc.hpp"
#include "models/os/syscall.hpp"

namespace vrdmasim {
namespace mm {

Process* proc(Mm& m, int pid) {
    auto it = m.procs.find(pid);
    return it == m.procs.end() ? nullptr : &it->second;
}

Vma* find_vma(Process& p, std::uint64_t va, std::uint64_t* start) {
    auto it = p.vmas.upper_bound(va);
    if (it == p.vmas.begin()) return nullptr;
    --it;
    if (va >= it->second.end) return nullptr;
    if (start) *start = it->first;
    return &it->second;
}

void split_vma_at(Process& p, std::uint64_t a) {
    std::uint64_t s = 0;
    Vma* v = find_vma(p, a, &s);
    if (!v || s == a) return;
    Vma upper = *v;
    v->end = a;
    p.vmas.emplace(a, upper);
}

bool covered(Process& p, std::uint64_t va, std::uint64_t end) {
    while (va < end) {
        std::uint64_t s = 0;
        Vma* v = find_vma(p, va, &s);
        if (!v) return false;
        va = v->end;
    }
    return true;
}

}   // namespace mm

using namespace mm;

VmResult Vm::mmap(int pid, std::uint64_t len, Prot prot, bool populate, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    if (len == 0 || len > kMmapBase) return call_return(m, c, VmError::Invalid);
    Process* p = c.p;
    m.stats.mmaps.inc();
    len = round_up(len, kPage);
    const std::uint64_t align = len >= kHuge ? kHuge : kPage;
    // Top-down: the highest gap below kMmapBase that fits.
    std::uint64_t hi = kMmapBase, addr = 0;
    bool found = false;
    for (auto it = p->vmas.rbegin();; ++it) {
        const std::uint64_t lo = it == p->vmas.rend() ? kMmapMin : it->second.end;
        if (hi >= len) {
            const std::uint64_t a = align_down(hi - len, align);
            if (a >= lo && a >= kMmapMin) {
                addr = a;
                found = true;
                break;
            }
        }
        if (it == p->vmas.rend()) break;
        hi = std::min(hi, it->first);
    }
    if (!found) return call_return(m, c, VmError::NoMemory);
    p->vmas.emplace(addr, Vma{addr + len, prot});
    VmError e = VmError::Ok;
    if (populate && prot != Prot::None) e = fault_range(m, *p, addr, addr + len, can_write(prot), c.w);
    // MAP_POPULATE is best effort: the mapping stands even if populating failed.
    (void)e;
    return call_return(m, c, VmError::Ok, addr);
}

VmResult Vm::mmap_fixed(int pid, std::uint64_t va, std::uint64_t len, Prot prot, bool populate, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    constexpr std::uint64_t kUserTop = 1ull << 48;   // t0sz() = 16
    len = round_up(len, kPage);
    if (len == 0 || va % kPage != 0 || va < kMmapMin || va > kUserTop || len > kUserTop - va)
        return call_return(m, c, VmError::Invalid);
    Process* p = c.p;
    // MAP_FIXED_NOREPLACE: any VMA inside the range refuses it.
    auto next = p->vmas.lower_bound(va);
    if (find_vma(*p, va) || (next != p->vmas.end() && next->first < va + len))
        return call_return(m, c, VmError::Exists);
    m.stats.mmaps.inc();
    p->vmas.emplace(va, Vma{va + len, prot});
    if (populate && prot != Prot::None) (void)fault_range(m, *p, va, va + len, can_write(prot), c.w);   // best effort
    return call_return(m, c, VmError::Ok, va);
}

VmResult Vm::munmap(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at, Range::Aligned, va, len);
        e != VmError::Ok)
        return call_return(m, c, e);
    Process* p = c.p;
    const std::uint64_t end = c.end;
    len = end - va;
    m.stats.munmaps.inc();
    settle(m, *p, va, end, c.w);   // a collapse in the range is completed first
    split_vma_at(*p, va);
    split_vma_at(*p, end);
    for (auto it = p->vmas.lower_bound(va); it != p->vmas.end() && it->first < end;) it = p->vmas.erase(it);
    return unmap_and_free(m, c);
}

}   // namespace vrdmasim
