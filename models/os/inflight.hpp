// Reads in flight (mm.hpp `Inflight`; Linux: a page locked in the swap cache
// or the page cache until its bio completes, mm/swap_state.c, mm/page_io.c,
// mm/filemap.c): a swap-in or a file fault whose SSD read is not done yet
// has its frame allocated and filled, but its PTE is written only at the
// read's completion, as do_swap_page and filemap_fault map a page only once
// it is uptodate. Until then a walker (the SMMU's, the CPU's, reclaim's,
// khugepaged's, the shadow NI pager's) sees the old entry, and another fault
// on the page waits for the same read (lock_page). README.md "Reads in
// flight".
#pragma once

#include <cstdint>

#include <systemc>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// The read in flight for page va of pid (not cancelled), or nullptr.
Inflight* inflight_at(Mm& m, int pid, std::uint64_t va);
// Whether a read in flight maps a page of [va, end) of pid.
bool any_inflight(const Mm& m, int pid, std::uint64_t va, std::uint64_t end);
// Record a read in flight: the PTE of page va of pid written at i.done (by
// complete_io). The DRAM's guard is told the frame is not readable before.
void defer_map(Mm& m, int pid, std::uint64_t va, const Inflight& i);
// A fault (or GUP) found page va under I/O: it sleeps on the page lock until
// the read is done (w.io), then finds the page mapped: `minor-fault`.
void wait_inflight(Mm& m, const Inflight& i, Work& w);
// A zap of [va, end) of p (munmap, MADV_DONTNEED): the reads in flight there
// never map anything; their frames (unless pinned: the pin then keeps the
// frame as an unmapped page) and swap slots are released at their completion.
void cancel_inflight(Mm& m, Process& p, std::uint64_t va, std::uint64_t end);
// Whether a cancelled read still reads swap slot `slot` (the slot is freed
// at its completion, not by the zap).
bool reading_slot(const Mm& m, std::uint64_t slot);
// The frame holding va's page: its present leaf's, or that of a read in
// flight for it (the page's bytes are already in that frame).
bool resident_frame(Mm& m, const Process& p, std::uint64_t va, std::uint64_t& pa);
// The same, given va's leaf descriptor d at `level` as leaf() just read it
// (no second walk).
bool resident_frame(Mm& m, const Process& p, std::uint64_t va, std::uint64_t d, int level, std::uint64_t& pa);
// Complete, in time order, every read done by `upto`: the PTE written with
// the VMA's protection of now, the slot freed, the map notifier told (at the
// read's completion time).
void complete_io(Mm& m, sc_core::sc_time upto);
// An untimed harness copy (read_user, write_user, the NetVM kernel copy)
// faulted page va in: the read it started completes now, `now` (the
// harness waits for it outside simulated time, as it did for every fault
// before reads in flight existed); the DRAM's hold on the frame ends now.
void complete_now(Mm& m, int pid, std::uint64_t va, sc_core::sc_time now);
// The time a call's prologue completes reads up to: the kernel's time in a
// running simulation (VmDaemons completes them at their time), the call's
// own `at` when nothing runs the kernel (plain model tests).
sc_core::sc_time io_clock(sc_core::sc_time at);
// Self-check: frame pa is about to be mapped at time t; a read in flight
// into it not done by t is a std::logic_error (a PTE visible before its data).
void check_uptodate(const Mm& m, std::uint64_t pa, sc_core::sc_time t);

}   // namespace mm
}   // namespace vrdmasim
