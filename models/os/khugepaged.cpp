// khugepaged (khugepaged.hpp; Linux's mm/khugepaged.c): the scan over the
// THP-eligible 2 MiB ranges from its hand, the collapse of one range in two
// phases (collapse_begin: PMD cleared as pmdp_collapse_flush, notifiers,
// bytes copied and swapped pages read back as __collapse_huge_page_swapin;
// collapse_finish: block installed), and the Vm's entry points.
#include "models/os/khugepaged.hpp"

#include "models/os/gup.hpp"
#include "models/os/huge_memory.hpp"
#include "models/os/inflight.hpp"
#include "models/os/mm.hpp"
#include "models/os/mmap.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/page_alloc.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

using namespace aarch64;
using sc_core::sc_time;

bool in_open(const Mm& m, int pid, std::uint64_t va, std::uint64_t end) {
    const OpenCollapse& open = m.khugepaged.open;
    return open.open && open.pid == pid && va < open.base + kHuge && end > open.base;
}

void collapse_finish(Mm& m) {
    OpenCollapse& open = m.khugepaged.open;
    if (!open.open) return;
    Process& p = m.procs.at(open.pid);
    // The block gets the VMA's user-access guard too (mprotect settles an
    // open collapse before changing it, so it is the one of the scan).
    PageTableWriter::Attrs a = attrs(open.prot);
    if (const Vma* v = find_vma(p, open.base)) a = attrs(Vma{v->end, open.prot, v->advice, v->locked, v->user});
    p.pt->map_block(open.base, open.block, a);
    res_set(m, open.pid, open.base, true);
    for (std::uint64_t pa : open.old) free_frame(m, pa, 0);
    free_frame(m, open.table, 0);
    m.stats.collapses.inc();
    if (m.ctx.tracer.noting())
        m.ctx.tracer.note(Tracer::Track{}, "collapse installed", open.install, sc_core::SC_ZERO_TIME, m.prefix,
                          "khugepaged installs the 2 MiB block " + hex(open.block) + " at " + hex(open.base) +
                              " of pid " + std::to_string(open.pid) + "; the " + std::to_string(open.old.size()) +
                              " old frames are freed",
                          open.story);
    if (m.khugepaged.pass.active) ++m.khugepaged.pass.collapsed;
    m.stats.collapse_window.add(to_us(open.install - open.clear));
    m.ctx.tracer.span(m.track, "collapse-window", open.clear, open.install);
    const sc_time install = open.install;
    open = OpenCollapse{};
    flush_mapped(m, install);
}

namespace {

// A THP-eligible 2 MiB range of a VMA.
struct HugeRange {
    int pid;
    std::uint64_t base;
    Prot prot;
};

// Every THP-eligible range of every process, in (pid, va) order.
std::vector<HugeRange> eligible_ranges(Mm& m) {
    std::vector<HugeRange> ranges;
    for (auto& pp : m.procs)
        for (const auto& vv : pp.second.vmas) {
            if (!thp_allowed(m, vv.second) || vv.second.prot == Prot::None) continue;
            for (std::uint64_t b = round_up(vv.first, kHuge); b + kHuge <= vv.second.end; b += kHuge)
                ranges.push_back({pp.first, b, vv.second.prot});
        }
    return ranges;
}

// Whether the page table at `table` may be collapsed (hpage_collapse_scan_pmd):
// no PROT_NONE or migration entry, within max_ptes_none / max_ptes_swap, some
// page present.
bool collapsible(Mm& m, std::uint64_t table) {
    std::uint64_t none = 0, swp = 0, present = 0, protnone = 0;
    for (unsigned i = 0; i < 512; ++i) {
        const std::uint64_t d = rd(m, table + 8ull * i);
        if (d & kValid) ++present;
        else if (is_migration(d)) ++protnone;   // being migrated: SCAN_PTE_NON_PRESENT, skipped
        else if (is_swap(d)) ++swp;
        else if (d & kSwProtNone) ++protnone;
        else ++none;
    }
    return !(protnone || none > m.params.max_ptes_none || swp > m.params.max_ptes_swap || present == 0);
}

// Phase 1 of the collapse of r into the free 2 MiB frame `block`, starting
// at t: the window opened, its install time returned.
sc_time collapse_open(Mm& m, const HugeRange& r, std::uint64_t table, std::uint64_t block, sc_time t) {
    Process& p = m.procs.at(r.pid);
    // The PMD is cleared (every PTE of the range gone at once, as
    // pmdp_collapse_flush), cached translations are invalidated, the
    // bytes are copied; the block is installed at the end of the copy
    // by collapse_finish.
    const sc_time t_clear = t;
    const std::uint64_t pmd = l2_slot(m, p, r.base);
    std::vector<std::uint64_t> entries(512);
    for (unsigned i = 0; i < 512; ++i) entries[i] = rd(m, table + 8ull * i);
    wr(m, pmd, 0);
    res_clear(m, p.pid, r.base, r.base + kHuge);
    t = invalidate(m, p, r.base, kHuge, t);
    sc_time copy = m.params.pte_update * 2, ssd_end = t;
    std::vector<unsigned char> bytes(kPage);
    std::vector<std::uint64_t> old;
    for (unsigned i = 0; i < 512; ++i) {
        const std::uint64_t d = entries[i], va = r.base + i * kPage, dst = block + i * kPage;
        if (d & kValid) {
            access(m, false, d & kAddrMask, bytes.data(), kPage);
            access(m, true, dst, bytes.data(), kPage);
            copy += m.params.copy_page;
            auto pin = p.pins.find(va);
            if (pin != p.pins.end()) {   // the pin keeps the old frame: a stale pin
                p.orphans.emplace(va, pin->second);
                p.pins.erase(pin);
                m.stats.stale_pins.inc();
            } else {
                old.push_back(d & kAddrMask);
            }
        } else if (is_swap(d)) {   // __collapse_huge_page_swapin: read it back
            const sc_time read_end = m.ssd->read_page(swap_slot(d), bytes.data(), t);
            ssd_end = max_time(ssd_end, read_end);
            access(m, true, dst, bytes.data(), kPage);
            if (m.io_guard) m.io_guard(dst, read_end);   // the block is installed after it anyway
            m.ssd->free_slot(swap_slot(d));
            m.stats.swap_ins.inc();
            copy += m.params.copy_page;
        } else {
            zero(m, dst, kPage);
            copy += m.params.zero_fill_page;
        }
    }
    const sc_time t_install = max_time(m.cpu.run("khugepaged", t, copy).end, ssd_end);
    OpenCollapse& open = m.khugepaged.open;
    open.open = true;
    open.pid = r.pid;
    open.base = r.base;
    open.block = block;
    open.table = table & ~(kPage - 1);
    open.prot = r.prot;
    open.old = std::move(old);
    open.clear = t_clear;
    open.install = t_install;
    return t_install;
}

// Phase 1: scan from the hand (starting a pass, or continuing the one in
// progress) up to the next collapse and open its window; or end the pass.
VmResult collapse_begin(Mm& m, sc_time at) {
    CollapsePass& pass = m.khugepaged.pass;
    if (m.khugepaged.open.open) {   // the caller did not end the last window: end it at its time
        at = max_time(at, m.khugepaged.open.install);
        collapse_finish(m);
    }
    const std::vector<HugeRange> ranges = eligible_ranges(m);
    const std::size_t n = ranges.size();
    if (!pass.active) {
        pass = CollapsePass{};
        pass.active = true;
        pass.left = n;
    }
    sc_time t = at;
    bool failed = false;
    std::size_t start = 0;
    const Hand& hand = m.khugepaged_hand;
    while (start < n &&
           (ranges[start].pid < hand.pid || (ranges[start].pid == hand.pid && ranges[start].base < hand.va)))
        ++start;
    if (start == n) start = 0;
    for (std::size_t k = 0; k < n && pass.left > 0 && pass.scanned < m.params.pages_to_scan; ++k) {
        const HugeRange& r = ranges[(start + k) % n];
        --pass.left;
        m.khugepaged_hand = {r.pid, r.base + kHuge};
        Process& p = m.procs.at(r.pid);
        int level = 0;
        const std::uint64_t table = leaf_slot(m, p, r.base, level);   // entry 0 of the page table
        if (!table || level == 2) {   // nothing mapped, or a block already
            pass.scanned += 1;
            pass.pending += m.params.scan_pte;
            continue;
        }
        pass.scanned += 512;
        pass.pending += m.params.scan_pte * 512;
        if (!collapsible(m, table)) continue;
        // A page under I/O (its read in flight, locked): SCAN_PAGE_LOCK, skipped.
        if (any_inflight(m, p.pid, r.base, r.base + kHuge)) continue;
        const bool pinned = any_pin(p, r.base, kHuge);
        if (pinned && m.params.pins_block_collapse) {
            m.stats.collapse_skipped_pinned.inc();
            if (m.ctx.tracer.noting())
                m.ctx.tracer.note(
                    Tracer::Track{}, "collapse skipped", t + pass.pending, sc_core::SC_ZERO_TIME, m.prefix,
                    "khugepaged skips " + hex(r.base) + " of pid " + std::to_string(p.pid) +
                        ": pages in it are pinned (vm.pins-block-thp-collapse: FOLL_LONGTERM pins, modern kernels)");
            continue;
        }
        if (device_locked(m, p.pid, r.base, kHuge, t + pass.pending)) {   // the NI is accessing a page (NetVM)
            m.locked_skips[2]->inc();
            continue;
        }
        auto h = m.frames.alloc(FrameAllocator::kMaxOrder);
        if (!h) {
            m.stats.collapse_failed_alloc.inc();
            failed = true;
            break;
        }
        Tracer::Cause step;
        if (m.ctx.tracer.noting()) {
            const CpuCores::Slot s = m.cpu.run(
                "khugepaged", t, pass.pending, "",
                {m.prefix,
                 "khugepaged collapses " + hex(r.base) + "..+2 MiB of pid " + std::to_string(p.pid) +
                     ": copies its pages into the huge frame " + hex(*h) +
                     ", clears the old PTEs (the MMU notifier invalidates the SMMU's TLBs) and will install a block" +
                     (pinned ? "; pinned pages do not stop it (vm.pins-block-thp-collapse = false, as older kernels): "
                               "their pins now hold frames the process no longer maps"
                             : ""),
                 Tracer::Cause{}});
            t = s.end;
            step = s.step;
        } else {
            t = m.cpu.run("khugepaged", t, pass.pending).end;
        }
        pass.pending = sc_core::SC_ZERO_TIME;
        VmResult res;
        const Tracer::Scope collapsing(m.ctx.tracer, step);   // the invalidations follow it
        res.done = collapse_open(m, r, table, *h, t);
        m.khugepaged.open.story = step;
        res.value = pass.collapsed;
        return res;
    }
    m.stats.khugepaged_scanned.inc(pass.scanned);
    VmResult res;
    res.done = m.cpu.run("khugepaged", t, pass.pending).end;
    res.value = pass.collapsed;
    res.error = failed ? VmError::NoMemory : VmError::Ok;
    pass = CollapsePass{};
    return res;
}

}   // namespace

}   // namespace mm

using namespace mm;

// A whole pass in one call: every window opened and closed at its times.
VmResult Vm::khugepaged_scan(sc_core::sc_time at) {
    Mm& m = *mm_;
    mm::complete_io(m, io_clock(at));   // reads done by now have their PTEs (inflight.hpp)
    for (;;) {
        VmResult r = mm::collapse_begin(m, at);
        if (!m.khugepaged.open.open) return r;
        at = m.khugepaged.open.install;
        collapse_finish(m);
    }
}

VmResult Vm::collapse_begin(sc_core::sc_time at) {
    mm::complete_io(*mm_, mm::io_clock(at));
    return mm::collapse_begin(*mm_, at);
}

VmResult Vm::collapse_end(sc_core::sc_time at) {
    Mm& m = *mm_;
    VmResult r;
    r.done = at;
    if (!m.khugepaged.open.open) return r;
    r.done = max_time(at, m.khugepaged.open.install);
    r.value = 1;
    collapse_finish(m);
    return r;
}

VmCollapse Vm::collapsing() const {
    const OpenCollapse& open = mm_->khugepaged.open;
    VmCollapse c;
    if (!open.open) return c;
    c.open = true;
    c.pid = open.pid;
    c.va = open.base;
    c.clear = open.clear;
    c.install = open.install;
    return c;
}

}   // namespace vrdmasim
