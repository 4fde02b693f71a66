// The entry and exit every Vm call shares (the system-call prologue and
// epilogue): the process looked up, the range checked and rounded (EINVAL,
// ENOMEM for an unmapped page), the call's fixed CPU cost; at the end the
// accumulated work charged on a core as the call's activity.
#pragma once

#include <functional>
#include <string>

#include <cstdint>

#include <systemc>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// How a call's [va, va + len) is checked and rounded; with a range, a zero
// or wrapping length is EINVAL.
enum class Range {
    None,   // no range checked (mmap checks its length itself, touch has none)
    Aligned,   // va must be page aligned, the length is rounded up (munmap, mprotect, madvise)
    Widened,   // widened to whole pages (mlock, munlock, pins, get_user_pages)
};

// One call in progress.
struct Call {
    const char* activity = "syscall";   // CpuCores activity charged at the end
    sc_core::sc_time at;   // when the caller asked
    Work w;
    Process* p = nullptr;
    std::uint64_t va = 0, end = 0;   // the checked, rounded range
};

// The prologue: c charged `cost`, its process and range set. Returns the
// error to answer (with call_return) or Ok. `must_cover`: every page of the
// range must lie in a VMA (else NoMemory).
VmError call_enter(Mm& m, Call& c, const char* activity, sc_core::sc_time cost, int pid, sc_core::sc_time at,
                   Range range = Range::None, std::uint64_t va = 0, std::uint64_t len = 0, bool must_cover = false);
// The epilogue: the call's work run on a core from its start (after any
// wait for a collapse or a migration), device waits on top.
VmResult call_return(Mm& m, const Call& c, VmError e, std::uint64_t value = 0);

// Run work `w` as `activity` on a core from `start`. When w has a story
// (tell) and the run notes stories, the slice is a step saying what() (and
// how many page events follow), and each page event follows it.
CpuCores::Slot run_work(Mm& m, const char* activity, sc_core::sc_time start, const Work& w,
                        const std::function<std::string()>& what);
// The page events of w as log lines at `at`, after `after`; a read in
// flight remembers its event for its completion's line. `at` is the work's
// start: the model applies a call's page-table changes when its work
// starts (devices can see them from then on; a read from the SSD maps its
// page only at its completion), so the log says so, whatever the work's
// CPU time.
void tell_steps(Mm& m, const Work& w, sc_core::sc_time at, const Tracer::Cause& after);

}   // namespace mm
}   // namespace vrdmasim
