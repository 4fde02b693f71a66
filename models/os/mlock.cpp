// mlock and munlock (mm/mlock.c): VM_LOCKED VMAs, faulted in and kept from
// reclaim, within RLIMIT_MEMLOCK (mlock.hpp) shared with the pins.
#include "models/os/mlock.hpp"

#include <algorithm>

#include "models/os/gup.hpp"
#include "models/os/memory.hpp"
#include "models/os/mmap.hpp"
#include "models/os/syscall.hpp"

namespace vrdmasim {
namespace mm {

std::uint64_t locked_bytes(const Process& p) {
    std::uint64_t n = 0;
    for (const auto& kv : p.vmas)
        if (kv.second.locked) n += kv.second.end - kv.first;
    return n;
}

bool memlock_allows(Mm& m, const Process& p, std::uint64_t more) {
    if (locked_bytes(p) + pinned(p) + more <= m.params.memlock_limit) return true;
    m.stats.memlock_refusals.inc();
    return false;
}

}   // namespace mm

using namespace mm;

VmResult Vm::mlock(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at, Range::Widened, va, len, true);
        e != VmError::Ok)
        return call_return(m, c, e);
    Process* p = c.p;
    const std::uint64_t end = c.end;
    va = c.va;
    m.stats.mlocks.inc();
    std::uint64_t fresh = 0;
    for (std::uint64_t a = va; a < end;) {
        Vma* v = find_vma(*p, a);
        const std::uint64_t e = std::min(end, v->end);
        if (!v->locked) fresh += e - a;
        a = e;
    }
    if (!memlock_allows(m, *p, fresh)) return call_return(m, c, VmError::MemlockLimit);
    VmError err = VmError::Ok;
    modify_vmas(*p, va, end, [&](std::uint64_t start, Vma& v) {
        v.locked = true;
        if (err == VmError::Ok && v.prot != Prot::None) err = fault_range(m, *p, start, v.end, can_write(v.prot), c.w);
    });
    return call_return(m, c, err, c.w.faulted);
}

VmResult Vm::munlock(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at, Range::Widened, va, len, true);
        e != VmError::Ok)
        return call_return(m, c, e);
    modify_vmas(*c.p, c.va, c.end, [](std::uint64_t, Vma& v) { v.locked = false; });
    return call_return(m, c, VmError::Ok);
}

}   // namespace vrdmasim
