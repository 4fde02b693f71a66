// The fault path (memory.hpp; Linux's mm/memory.c handle_mm_fault,
// do_anonymous_page, do_swap_page) and zapping ranges (zap_page_range),
// with the Vm's user-access entry point Vm::touch.
#include "models/os/memory.hpp"

#include <stdexcept>

#include "models/os/huge_memory.hpp"
#include "models/os/inflight.hpp"
#include "models/os/khugepaged.hpp"
#include "models/os/migrate.hpp"
#include "models/os/mmap.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/page_alloc.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/syscall.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

using namespace aarch64;
using sc_core::sc_time;

namespace {

// A major fault (do_swap_page): a frame allocated, the slot read into it;
// the PTE is written when the read completes (inflight.hpp), not before:
// until then walkers see the swap entry, and a fault on the page waits for
// this read. The slot is freed at the completion.
VmError swap_in(Mm& m, Process& p, std::uint64_t page, std::uint64_t d, Work& w) {
    if (!m.ssd) throw std::logic_error("Vm: swap entry without a swap device");
    auto pa = alloc_page(m, w);
    if (!pa) return VmError::NoMemory;
    std::vector<unsigned char> bytes(kPage);
    const sc_time issue = w.at + w.cpu + w.io;
    const sc_time done = m.ssd->read_page(swap_slot(d), bytes.data(), issue);
    w.io += done - issue;
    access(m, true, *pa, bytes.data(), kPage);   // the frame is no one's until the PTE maps it
    Inflight i;
    i.kind = Inflight::Kind::SwapIn;
    i.pa = *pa;
    i.slot = swap_slot(d);
    i.done = done;
    defer_map(m, p.pid, page, i);
    m.stats.faults_major.inc();
    m.stats.swap_ins.inc();
    w.cpu += m.params.major_fault + m.params.pte_update;
    w.faulted += 1;
    tell(
        m, w, p.pid, page,
        [&] {
            return "major fault at " + Tracer::hex(page) + ": a swap entry; swap slot " + std::to_string(swap_slot(d)) +
                   " is read from the SSD into frame " + Tracer::hex(*pa) + " (the read completes at " +
                   us_text(done.value()) + ", behind the device's earlier requests); the PTE is written then";
        },
        true);
    return VmError::Ok;
}

// A zero-filled 4 KiB page for page (do_anonymous_page).
VmError zero_fault(Mm& m, Process& p, const Vma& v, std::uint64_t page, Work& w) {
    auto pa = alloc_page(m, w);
    if (!pa) return VmError::NoMemory;
    zero(m, *pa, kPage);
    try {
        p.pt->map_page(page, *pa, attrs(v));
    } catch (const OutOfFrames&) {
        free_frame(m, *pa, 0);
        return VmError::NoMemory;
    }
    res_set(m, p.pid, page, true);
    m.stats.faults_minor.inc();
    m.stats.zero_fills.inc();
    m.stats.pages_mapped.inc();
    w.cpu += m.params.minor_fault + m.params.zero_fill_page + m.params.pte_update;
    w.faulted += 1;
    tell(m, w, p.pid, page, [&] {
        return "minor fault at " + Tracer::hex(page) + ": never touched, a zero-filled frame " + Tracer::hex(*pa) +
               " is mapped";
    });
    return VmError::Ok;
}

}   // namespace

VmError fault_page(Mm& m, Process& p, std::uint64_t va, bool write, Work& w, std::uint64_t& next) {
    const std::uint64_t page = align_down(va, kPage);
    next = page + kPage;
    if (settle(m, p, page, page + kPage, w)) {   // the fault waited for a collapse or a migration
        w.fault_taken = true;
        w.cpu += m.params.minor_fault;   // then retries and finds the block
    }
    std::uint64_t vstart = 0;
    Vma* v = find_vma(p, va, &vstart);
    if (!v) return VmError::Fault;
    if (v->prot == Prot::None || (write && !can_write(v->prot))) {
        w.fault_taken = true;
        w.cpu += m.params.minor_fault;   // the fault is taken, then refused
        tell(m, w, p.pid, page, [&] {
            return "fault at " + Tracer::hex(page) + " refused: the mapping does not allow " +
                   (write ? "writing" : "access") + " (EFAULT)";
        });
        return VmError::Access;
    }
    std::uint64_t at = 0;
    int level = 0;
    const std::uint64_t d = leaf(m, p, va, &at, &level);
    if (d & kValid) {
        if (level == 2) next = align_down(va, kHuge) + kHuge;
        if (!(d & kAf)) {   // A53 (ARMv8.0): no hardware AF update, an access-flag fault
            wr(m, at, d | kAf);
            m.stats.faults_af.inc();
            w.fault_taken = true;
            w.cpu += m.params.minor_fault + m.params.pte_update;
            tell(m, w, p.pid, page, [&] {
                return "access-flag fault at " + Tracer::hex(page) +
                       ": the page is present but not young (reclaim cleared AF); the kernel sets AF";
            });
        } else {
            w.cpu += m.params.user_access;
        }
        return VmError::Ok;
    }
    w.fault_taken = true;
    if (Inflight* i = inflight_at(m, p.pid, page)) {   // under I/O: wait for the same read (lock_page)
        wait_inflight(m, *i, w);
        tell(m, w, p.pid, page, [&] {
            return "fault at " + Tracer::hex(page) + ": its read is already in flight; it waits for it (until " +
                   us_text(i->done.value()) + ")";
        });
        return VmError::Ok;
    }
    if (v->file >= 0) return file_fault(m, p, *v, va, w);   // a file mapping: the page cache's page (filemap.cpp)
    if (level == 3 && is_swap(d)) return swap_in(m, p, page, d, w);
    // Not present: zero-fill fault. THP first.
    VmError e = VmError::Ok;
    if (huge_fault(m, p, *v, vstart, va, at, level, w, next, e)) return e;
    return zero_fault(m, p, *v, page, w);
}

VmError fault_range(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, bool write, Work& w) {
    while (va < end) {
        std::uint64_t next = 0;
        const VmError e = fault_page(m, p, va, write, w, next);
        if (e != VmError::Ok) return e;
        va = next;
    }
    return VmError::Ok;
}

bool settle(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, Work& w) {
    bool waited = false;
    if (in_open(m, p.pid, va, end)) {
        const sc_time t = m.khugepaged.open.install;
        collapse_finish(m);
        if (t > w.at) w.at = t;
        waited = true;
    }
    if (in_migration(m, p.pid, va, end)) {
        const sc_time t = m.mig.install;
        migration_finish(m);
        m.stats.migration_waits.inc();
        if (t > w.at) w.at = t;
        waited = true;
    }
    return waited;
}

void drop_range(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, Work& w,
                std::vector<std::pair<std::uint64_t, unsigned>>& to_free) {
    cancel_inflight(m, p, va, end);   // reads in flight there map nothing (their slots go at completion)
    auto drop_page = [&](std::uint64_t page, std::uint64_t pa) {
        if (cache_unmap(m, pa)) return;   // a page-cache page: the cache keeps its frame
        auto it = p.pins.find(page);
        if (it != p.pins.end()) {
            p.orphans.emplace(page, it->second);
            p.pins.erase(it);
        } else {
            to_free.emplace_back(pa, 0);
        }
    };
    while (va < end) {
        std::uint64_t at = 0;
        int level = 0;
        const std::uint64_t d = leaf(m, p, va, &at, &level);
        const std::uint64_t base = align_down(va, kHuge);
        if (!at || (level == 2 && !has_frame(d))) {
            va = base + kHuge;
            continue;
        }
        if (level == 2) {
            if (va != base || end < base + kHuge) {   // partly in range: split first
                tell(m, w, p.pid, base, [&] {
                    return "the range unmapped covers only part of the 2 MiB huge page at " + Tracer::hex(base) +
                           ": it is split into 4 KiB pages first";
                });
                split_block(m, p, base, w);
                continue;
            }
            wr(m, at, 0);
            res_set(m, p.pid, base, false);
            w.cpu += m.params.pte_update;
            const std::uint64_t pa = d & kAddrMask;
            bool any_pin = false;
            for (auto it = p.pins.lower_bound(base); it != p.pins.end() && it->first < base + kHuge; ++it)
                any_pin = true;
            if (!any_pin) {
                to_free.emplace_back(pa, FrameAllocator::kMaxOrder);
            } else {
                split_frame(m, pa);
                for (unsigned i = 0; i < 512; ++i) drop_page(base + i * kPage, pa + i * kPage);
            }
            va = base + kHuge;
            continue;
        }
        if (has_frame(d)) {
            wr(m, at, 0);
            res_set(m, p.pid, align_down(va, kPage), false);
            w.cpu += m.params.pte_update;
            drop_page(align_down(va, kPage), d & kAddrMask);
        } else if (is_swap(d)) {   // the page is on swap: its slot goes (a cancelled read's at its completion)
            wr(m, at, 0);
            w.cpu += m.params.pte_update;
            if (!reading_slot(m, swap_slot(d))) m.ssd->free_slot(swap_slot(d));
        }
        va = align_down(va, kPage) + kPage;
    }
}

VmResult unmap_and_free(Mm& m, Call& c) {
    std::vector<std::pair<std::uint64_t, unsigned>> to_free;
    drop_range(m, *c.p, c.va, c.end, c.w, to_free);
    VmResult r = call_return(m, c, VmError::Ok);
    r.done = invalidate(m, *c.p, c.va, c.end - c.va, r.done);   // before the frames can be reused
    for (const auto& f : to_free) free_frame(m, f.first, f.second);
    return r;
}

}   // namespace mm

using namespace mm;

VmResult Vm::touch(int pid, std::uint64_t va, bool write, sc_core::sc_time at) {
    Mm& m = *mm_;
    Call c;
    if (const VmError e = call_enter(m, c, "page-fault", sc_core::SC_ZERO_TIME, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    std::uint64_t next = 0;
    const VmError e = fault_page(m, *c.p, va, write, c.w, next);
    c.activity = c.w.fault_taken ? "page-fault" : "user-access";
    VmResult r = call_return(m, c, e, c.w.faulted);
    if (c.w.fault_taken) m.stats.fault_time.add(to_us(r.done - at));
    return r;
}

}   // namespace vrdmasim
