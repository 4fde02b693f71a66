// The user-access guard (Vm::guard_user, Vm::user_permits; README.md
// "Buffer guard"): an mprotect that takes the application's (EL0) access to
// a range away while a device whose SMMU transactions are privileged keeps
// the access the VMA's protection gives. ARMv8 stage-1 AP[2:1] (ARM ARM
// D5.4.4): 01 EL1 and EL0 read/write, 00 EL1 read/write and EL0 none, 11
// both read-only. The guard lives in the VMA (Vma::user), so every leaf
// created in the range later (a fault of the CPU or of the SMMU's fault
// library, a swap-in, a THP fault or collapse) gets the same bits; a split or
// a migration keeps a leaf's bits as they are.
#include <algorithm>

#include "models/os/huge_memory.hpp"
#include "models/os/memory.hpp"
#include "models/os/mmap.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/mprotect.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/syscall.hpp"

namespace vrdmasim {

using namespace mm;
using namespace aarch64;

namespace {

// Flush by page up to this many pages, else the whole ASID (Linux arm64's
// MAX_TLBI_OPS, asm/tlbflush.h: PTRS_PER_PTE).
constexpr std::uint64_t kMaxTlbiOps = 512;

}   // namespace

VmResult Vm::guard_user(int pid, std::uint64_t va, std::uint64_t len, UserAccess access, sc_core::sc_time tlbi_page,
                        sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at, Range::Aligned, va, len, true);
        e != VmError::Ok)
        return call_return(m, c, e);
    Process* p = c.p;
    const std::uint64_t end = c.end;
    len = end - va;
    m.stats.mprotects.inc();
    settle(m, *p, va, end, c.w);   // a collapse or migration in the range is completed first
    modify_vmas(*p, va, end, [&](std::uint64_t, Vma& v) { v.user = access; });
    // mprotect's leaf walk; the AP bits of each leaf's VMA (just set), its
    // presence unchanged (nothing for reclaim's LRU or the map notifier).
    rewrite_leaves(
        m, *p, va, end, c.w,
        [p](std::uint64_t d, std::uint64_t a) {
            const Vma* v = find_vma(*p, a);
            return v ? with_user_access(d, *v) : d;
        },
        false);
    // The CPU's own TLB (flush_tlb_range): by page, or the whole ASID beyond MAX_TLBI_OPS.
    c.w.cpu += tlbi_page * static_cast<double>(std::min<std::uint64_t>(len / kPage, kMaxTlbiOps));
    VmResult r = call_return(m, c, VmError::Ok);
    r.done = invalidate(m, *p, va, len, r.done);   // the SMMU's TLBs, as for every mprotect
    return r;
}

bool Vm::user_permits(int pid, std::uint64_t va, bool write) const {
    Mm& m = *mm_;
    auto it = m.procs.find(pid);
    if (it == m.procs.end() || (va >> 48) != 0) return false;
    const std::uint64_t d = leaf(m, it->second, va);
    if (!(d & kValid)) return false;
    if (!(d & kApUser)) return false;   // AP[1] clear: EL1 only
    return !write || !(d & kApReadOnly);   // AP[2] set: read-only at both levels
}

}   // namespace vrdmasim
