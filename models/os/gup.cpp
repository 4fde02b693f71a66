// get_user_pages and pins (gup.hpp; Linux's mm/gup.c): Vm::fault_in
// (faultin_page over a range), Vm::pin / Vm::unpin within RLIMIT_MEMLOCK.
#include "models/os/gup.hpp"

#include "models/os/huge_memory.hpp"
#include "models/os/inflight.hpp"
#include "models/os/memory.hpp"
#include "models/os/mlock.hpp"
#include "models/os/page_alloc.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/syscall.hpp"

namespace vrdmasim {
namespace mm {

std::uint64_t pinned(const Process& p) { return p.pinned_pages * kPage; }

std::uint64_t pinned_recount(const Process& p) {
    std::uint64_t n = 0;
    for (const auto& kv : p.pins) n += kv.second.count;
    for (const auto& kv : p.orphans) n += kv.second.count;
    return n * kPage;
}

bool any_pin(const Process& p, std::uint64_t va, std::uint64_t len) {
    auto it = p.pins.lower_bound(va);
    return it != p.pins.end() && it->first < va + len;
}

namespace {

// A huge page pinned only in part is split, so that its unpinned pages
// stay movable and reclaimable (the pins are per 4 KiB page). False if no
// frame for the page table.
bool split_pinned_edges(Mm& m, Process& p, std::uint64_t start, std::uint64_t end, Work& w) {
    for (const std::uint64_t edge : {start, end}) {
        const std::uint64_t base = align_down(edge, kHuge);
        if (edge == base) continue;
        std::uint64_t slot = 0;
        int level = 0;
        const std::uint64_t d = leaf(m, p, edge == end ? end - 1 : edge, &slot, &level);
        if (slot && level == 2 && has_frame(d)) {
            tell(m, w, p.pid, base, [&] {
                return "the pin covers only part of the 2 MiB huge page at " + Tracer::hex(base) +
                       ": it is split into 4 KiB pages, so that the unpinned ones stay movable";
            });
            try {
                split_block(m, p, base, w);
            } catch (const OutOfFrames&) {
                return false;
            }
        }
    }
    return true;
}

}   // namespace

}   // namespace mm

using namespace mm;

VmResult Vm::fault_in(int pid, std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "page-fault", sc_core::SC_ZERO_TIME, pid, at, Range::Widened, va, len);
        e != VmError::Ok)
        return call_return(m, c, e);
    const VmError e = fault_range(m, *c.p, c.va, va + len, write, c.w);
    VmResult r = call_return(m, c, e, c.w.faulted);
    if (c.w.fault_taken) m.stats.fault_time.add(to_us(r.done - at));
    return r;
}

VmResult Vm::pin(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "pin", m.params.pin_call, pid, at, Range::Widened, va, len, true);
        e != VmError::Ok)
        return call_return(m, c, e);
    Process* p = c.p;
    const std::uint64_t start = c.va, end = c.end;
    const std::uint64_t pages = (end - start) / kPage;
    if (!memlock_allows(m, *p, pages * kPage)) {
        tell(m, c.w, p->pid, start, [&] {
            return "pin of " + std::to_string(pages) + " pages at " + Tracer::hex(start) +
                   " refused: locked and pinned memory would pass RLIMIT_MEMLOCK (" +
                   std::to_string(m.params.memlock_limit) + " B; already " +
                   std::to_string(locked_bytes(*p) + pinned(*p)) + " B)";
        });
        return call_return(m, c, VmError::MemlockLimit);
    }
    const VmError e = fault_range(m, *p, start, end, true, c.w);
    if (e == VmError::NoMemory) m.stats.pin_no_memory.inc();
    if (e != VmError::Ok) return call_return(m, c, e);
    if (!split_pinned_edges(m, *p, start, end, c.w)) {
        m.stats.pin_no_memory.inc();
        return call_return(m, c, VmError::NoMemory);
    }
    // Linux's get_user_pages takes each page's reference as it faults it
    // in, so reclaim cannot take the first pages of a range while the last
    // come in. Here the range was faulted in first: a page reclaim took back
    // meanwhile (short of frames) is faulted in again now, with the pages
    // before it already pinned. If it still cannot be had, the pins of this
    // call are dropped and the pin fails (ENOMEM): a pinned page is always
    // resident, never a pin on a swapped-out page.
    auto drop = [&](std::uint64_t upto) {
        for (std::uint64_t b = start; b < upto; b += kPage) {
            auto it = p->pins.find(b);
            if (--it->second.count == 0) p->pins.erase(it);
            --p->pinned_pages;
        }
    };
    for (std::uint64_t a = start; a < end; a += kPage) {
        std::uint64_t pa = 0;   // present, or its read in flight (GUP returns the locked page's frame)
        if (!resident_frame(m, *p, a, pa)) {
            const VmError again = fault_range(m, *p, a, a + kPage, true, c.w);
            if (again != VmError::Ok || !resident_frame(m, *p, a, pa)) {
                drop(a);
                m.stats.pin_no_memory.inc();
                return call_return(m, c, again != VmError::Ok ? again : VmError::NoMemory);
            }
        }
        PinRec& r = p->pins[a];
        r.count++;
        r.pa = pa;
        ++p->pinned_pages;
    }
    m.stats.pages_pinned.inc(pages);
    c.w.cpu += m.params.pin_page * static_cast<double>(pages);
    tell(m, c.w, p->pid, start, [&] {
        return "pins " + std::to_string(pages) + " page" + (pages == 1 ? "" : "s") + " at " + Tracer::hex(start) +
               " (pin_user_pages): reclaim, migration and khugepaged leave them; pinned now " +
               std::to_string(pinned(*p)) + " B of RLIMIT_MEMLOCK " + std::to_string(m.params.memlock_limit) + " B";
    });
    return call_return(m, c, VmError::Ok, pages);
}

VmResult Vm::unpin(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "pin", m.params.pin_call, pid, at, Range::Widened, va, len);
        e != VmError::Ok)
        return call_return(m, c, e);
    Process* p = c.p;
    const std::uint64_t start = c.va, end = c.end;
    for (std::uint64_t a = start; a < end; a += kPage)   // every page must be pinned: else nothing changes
        if (!p->pins.count(a) && !p->orphans.count(a)) return call_return(m, c, VmError::Invalid);
    std::uint64_t pages = 0;
    for (std::uint64_t a = start; a < end; a += kPage, ++pages) {
        --p->pinned_pages;
        auto it = p->pins.find(a);
        if (it != p->pins.end()) {
            if (--it->second.count == 0) p->pins.erase(it);
            continue;
        }
        auto o = p->orphans.find(a);
        if (--o->second.count == 0) {
            free_frame(m, o->second.pa, 0);   // the last pin of an unmapped page: its frame goes
            p->orphans.erase(o);
        }
    }
    c.w.cpu += m.params.pin_page * static_cast<double>(pages);
    tell(m, c.w, p->pid, start, [&] {
        return "unpins " + std::to_string(pages) + " page" + (pages == 1 ? "" : "s") + " at " + Tracer::hex(start) +
               ": movable and reclaimable again; pinned now " + std::to_string(pinned(*p)) + " B";
    });
    return call_return(m, c, VmError::Ok, pages);
}

unsigned Vm::pin_count(int pid, std::uint64_t va) const {
    auto it = mm_->procs.find(pid);
    if (it == mm_->procs.end()) return 0;
    const std::uint64_t page = align_down(va, kPage);
    unsigned n = 0;
    auto l = it->second.pins.find(page);
    if (l != it->second.pins.end()) n += l->second.count;
    auto range = it->second.orphans.equal_range(page);
    for (auto o = range.first; o != range.second; ++o) n += o->second.count;
    return n;
}

std::uint64_t Vm::pinned_bytes(int pid) const {
    auto it = mm_->procs.find(pid);
    return it == mm_->procs.end() ? 0 : pinned(it->second);
}

std::string Vm::pin_count_mismatch() const {
    for (const auto& kv : mm_->procs) {
        const std::uint64_t kept = pinned(kv.second), counted = pinned_recount(kv.second);
        if (kept != counted)
            return "process " + std::to_string(kv.first) + " (" + kv.second.name + ") keeps " + std::to_string(kept) +
                   " B pinned but its pins count " + std::to_string(counted) + " B";
    }
    return {};
}

}   // namespace vrdmasim
