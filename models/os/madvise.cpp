// madvise (mm/madvise.c): MADV_HUGEPAGE / MADV_NOHUGEPAGE on the VMAs,
// MADV_POPULATE_WRITE (fault every page in), MADV_DONTNEED (zap the range;
// EINVAL on a VM_LOCKED VMA).
#include "models/os/memory.hpp"
#include "models/os/mmap.hpp"
#include "models/os/syscall.hpp"

namespace vrdmasim {

using namespace mm;

VmResult Vm::madvise(int pid, std::uint64_t va, std::uint64_t len, Advice advice, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at, Range::Aligned, va, len, true);
        e != VmError::Ok)
        return call_return(m, c, e);
    Process* p = c.p;
    const std::uint64_t end = c.end;
    m.stats.madvises.inc();
    settle(m, *p, va, end, c.w);   // a collapse in the range is completed first
    switch (advice) {
    case Advice::HugePage:
    case Advice::NoHugePage: {
        const HugeAdvice h = advice == Advice::HugePage ? HugeAdvice::Huge : HugeAdvice::NoHuge;
        modify_vmas(*p, va, end, [&](std::uint64_t, Vma& v) { v.advice = h; });
        return call_return(m, c, VmError::Ok);
    }
    case Advice::PopulateWrite: {
        const VmError e = fault_range(m, *p, va, end, true, c.w);
        return call_return(m, c, e, c.w.faulted);
    }
    case Advice::DontNeed: {
        for (std::uint64_t a = va; a < end;) {   // MADV_DONTNEED on VM_LOCKED: EINVAL
            Vma* v = find_vma(*p, a);
            if (v->locked) return call_return(m, c, VmError::Invalid);
            a = v->end;
        }
        return unmap_and_free(m, c);
    }
    }
    return call_return(m, c, VmError::Invalid);
}

}   // namespace vrdmasim
