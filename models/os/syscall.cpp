// The common entry and exit of the Vm's calls (syscall.hpp).
#include "models/os/syscall.hpp"

#include "models/os/inflight.hpp"
#include "models/os/mmap.hpp"
#include "models/os/mmu_notifier.hpp"

namespace vrdmasim {
namespace mm {

VmError call_enter(Mm& m, Call& c, const char* activity, sc_core::sc_time cost, int pid, sc_core::sc_time at,
                   Range range, std::uint64_t va, std::uint64_t len, bool must_cover) {
    c.activity = activity;
    c.at = at;
    c.w.at = at;
    c.w.cpu = cost;
    complete_io(m, io_clock(at));   // reads done by now have their PTEs (inflight.hpp)
    c.p = proc(m, pid);
    if (!c.p) return VmError::Invalid;
    if (range == Range::None) return VmError::Ok;
    const bool aligned = range == Range::Aligned;
    if (len == 0 || va + len < va || (aligned && (va & (kPage - 1)))) return VmError::Invalid;
    c.va = aligned ? va : align_down(va, kPage);
    c.end = aligned ? va + round_up(len, kPage) : round_up(va + len, kPage);
    if (must_cover && !covered(*c.p, c.va, c.end)) return VmError::NoMemory;
    return VmError::Ok;
}

VmResult call_return(Mm& m, const Call& c, VmError e, std::uint64_t value) {
    VmResult r;
    r.error = e;
    r.value = value;
    // w.at: after a collapse or migration wait
    r.done = m.cpu.run(c.activity, max_time(c.at, c.w.at), c.w.cpu).end + c.w.io;
    r.done = flush_mapped(m, r.done);   // a device's copy of the new leaves (NetVM's shadow table)
    return r;
}

}  // namespace mm
}  // namespace vrdmasim
