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

bool noting(const Mm& m) { return m.ctx.tracer.noting(); }

void tell_steps(Mm& m, const Work& w, sc_core::sc_time at, const Tracer::Cause& after) {
    Tracer& tr = m.ctx.tracer;
    for (const PageStep& st : w.story) {
        const Tracer::Cause step =
            tr.note(Tracer::Track{}, "page", at, sc_core::SC_ZERO_TIME, m.prefix, st.text, after);
        if (st.read_in_flight)
            if (Inflight* i = inflight_at(m, st.pid, st.page)) i->story = step;
    }
}

CpuCores::Slot run_work(Mm& m, const char* activity, sc_core::sc_time start, const Work& w,
                        const std::function<std::string()>& what) {
    if (w.story.empty() || !m.ctx.tracer.noting()) return m.cpu.run(activity, start, w.cpu);
    // The work is the step (following whatever the caller is telling, e.g.
    // the fault library); each page's step follows it.
    const std::size_t n = w.story.size();
    const CpuCores::Slot s = m.cpu.run(
        activity, start, w.cpu, "",
        {m.prefix,
         what() + "; " + std::to_string(n) + " page event" + (n == 1 ? "" : "s") + " follow" + (n == 1 ? "s" : ""),
         m.ctx.tracer.current()});
    tell_steps(m, w, s.start, s.step);
    return s;
}

VmResult call_return(Mm& m, const Call& c, VmError e, std::uint64_t value) {
    VmResult r;
    r.error = e;
    r.value = value;
    // w.at: after a collapse or migration wait
    r.done =
        run_work(m, c.activity, max_time(c.at, c.w.at), c.w,
                 [&] {
                     return "the kernel's " + std::string(c.activity) + " work" +
                            (c.p ? " for pid " + std::to_string(c.p->pid) : std::string()) +
                            (c.end > c.va ? " over " + Tracer::hex(c.va) + ".." + Tracer::hex(c.end) : std::string()) +
                            (e == VmError::Ok ? "" : " fails: " + std::string(to_string(e)));
                 })
            .end +
        c.w.io;
    r.done = flush_mapped(m, r.done);   // a device's copy of the new leaves (NetVM's shadow table)
    return r;
}

}   // namespace mm
}   // namespace vrdmasim
