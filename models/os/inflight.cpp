// Reads in flight and their completion (inflight.hpp).
#include "models/os/inflight.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/os/mmap.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/page_alloc.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

using namespace aarch64;
using sc_core::sc_time;

Inflight* inflight_at(Mm& m, int pid, std::uint64_t va) {
    if (m.inflight.empty()) return nullptr;
    auto it = m.inflight.find({pid, align_down(va, kPage)});
    return it == m.inflight.end() ? nullptr : &it->second;
}

bool any_inflight(const Mm& m, int pid, std::uint64_t va, std::uint64_t end) {
    if (m.inflight.empty()) return false;
    auto it = m.inflight.lower_bound({pid, align_down(va, kPage)});
    return it != m.inflight.end() && it->first.first == pid && it->first.second < end;
}

void defer_map(Mm& m, int pid, std::uint64_t va, const Inflight& i) {
    const Key k{pid, align_down(va, kPage)};
    if (!m.inflight.emplace(k, i).second) throw std::logic_error("Vm: a second read in flight for one page");
    m.inflight_frames.emplace(align_down(i.pa, kPage), i.done);
    m.io_queue.emplace(i.done, k);
    if (m.io_guard) m.io_guard(i.pa, i.done);
    if (m.io_wake) m.io_wake(i.done);
}

namespace {

// Forget a read in flight (completed or cancelled), with its frame's entry
// in the index.
std::map<Key, Inflight>::iterator erase_inflight(Mm& m, std::map<Key, Inflight>::iterator it) {
    auto range = m.inflight_frames.equal_range(align_down(it->second.pa, kPage));
    for (auto f = range.first; f != range.second; ++f)
        if (f->second == it->second.done) {
            m.inflight_frames.erase(f);
            break;
        }
    return m.inflight.erase(it);
}

}   // namespace

void wait_inflight(Mm& m, const Inflight& i, Work& w) {
    if (!m.io_waits)
        m.io_waits = &m.ctx.stats.counter(m.prefix + ".io_waits", "",
                                          "faults that waited for a page's read in flight (swap-in or file read)");
    m.io_waits->inc();
    const sc_time now = w.at + w.cpu + w.io;
    if (i.done > now) w.io += i.done - now;
    w.fault_taken = true;
    w.cpu += m.params.minor_fault;   // woken, it finds the page mapped
}

void cancel_inflight(Mm& m, Process& p, std::uint64_t va, std::uint64_t end) {
    if (m.inflight.empty()) return;
    auto it = m.inflight.lower_bound({p.pid, align_down(va, kPage)});
    while (it != m.inflight.end() && it->first.first == p.pid && it->first.second < end) {
        Inflight i = it->second;
        i.cancelled = true;
        if (i.kind == Inflight::Kind::SwapIn) {
            auto pin = p.pins.find(it->first.second);
            if (pin != p.pins.end()) {   // the pin keeps the frame: an unmapped pinned page
                pin->second.pa = i.pa;
                p.orphans.emplace(it->first.second, pin->second);
                p.pins.erase(pin);
                i.pinned = true;
            }
        }
        m.zombies.emplace(i.done, std::make_pair(it->first, i));
        it = erase_inflight(m, it);
    }
}

bool reading_slot(const Mm& m, std::uint64_t slot) {
    for (const auto& z : m.zombies)
        if (z.second.second.kind == Inflight::Kind::SwapIn && z.second.second.slot == slot) return true;
    return false;
}

bool resident_frame(Mm& m, const Process& p, std::uint64_t va, std::uint64_t& pa) {
    if (translate(m, p, va, pa)) return true;
    return resident_frame(m, p, va, 0, 0, pa);
}

bool resident_frame(Mm& m, const Process& p, std::uint64_t va, std::uint64_t d, int level, std::uint64_t& pa) {
    if (d & kValid) {
        pa = leaf_pa(d, level, va);
        return true;
    }
    auto it = m.inflight.find({p.pid, align_down(va, kPage)});
    if (it == m.inflight.end()) return false;
    pa = it->second.pa + (va & (kPage - 1));
    return true;
}

sc_time io_clock(sc_time at) { return sc_core::sc_is_running() ? sc_core::sc_time_stamp() : at; }

void check_uptodate(const Mm& m, std::uint64_t pa, sc_time t) {
    pa = align_down(pa, kPage);
    auto range = m.inflight_frames.equal_range(pa);
    for (auto f = range.first; f != range.second; ++f)
        if (f->second > t)
            throw std::logic_error("Vm: frame " + hex(pa) + " mapped at " + std::to_string(to_us(t)) +
                                   " us while its read completes at " + std::to_string(to_us(f->second)) +
                                   " us (a PTE visible before its data)");
}

namespace {

// Write the PTE of a completed read (pid, va): the frame with the VMA's
// protection and user-access guard of now (PROT_NONE: the frame kept behind
// a non-present descriptor, as mprotect leaves it).
void install(Mm& m, const Key& k, const Inflight& i) {
    Process& p = m.procs.at(k.first);
    const std::uint64_t va = k.second;
    check_uptodate(m, i.pa, i.done);
    Vma* v = find_vma(p, va);
    std::uint64_t slot = 0;
    int level = 0;
    const std::uint64_t d = leaf(m, p, va, &slot, &level);
    const bool expected = i.kind == Inflight::Kind::SwapIn ? (level == 3 && is_swap(d) && swap_slot(d) == i.slot)
                                                           : (slot && level == 3 && d == 0);
    if (!v || !expected)   // every path that changes the entry cancels the read first
        throw std::logic_error("Vm: the entry of page " + hex(va) + " of pid " + std::to_string(k.first) +
                               " changed under its read in flight");
    p.pt->map_page(va, i.pa, attrs(*v));   // the table exists (the old entry is in it): no allocation
    if (v->prot == Prot::None) {
        wr(m, slot, (rd(m, slot) & ~kValid) | kSwProtNone);
    } else {
        res_set(m, p.pid, va, true);
    }
    m.stats.pages_mapped.inc();
    if (m.ctx.tracer.noting())
        m.ctx.tracer.note(
            Tracer::Track{}, "read complete", i.done, sc_core::SC_ZERO_TIME, m.prefix,
            std::string(i.kind == Inflight::Kind::SwapIn ? "the SSD read of swap slot " + std::to_string(i.slot)
                                                         : "the file read") +
                " completes: page " + hex(va) + " of pid " + std::to_string(k.first) + " is mapped to frame " +
                hex(i.pa) + (v->prot == Prot::None ? " (PROT_NONE)" : "") + ", the faults waiting for it go on",
            i.story);
    if (i.kind == Inflight::Kind::SwapIn) {
        m.ssd->free_slot(i.slot);
    } else {
        CachePage* c = find_page(*m.cache, i.file, i.index);
        if (!c || c->pa != i.pa) throw std::logic_error("Vm: a file read in flight lost its page-cache page");
        verify_page(m, i.file, i.index, *c);   // what the mapping shows is the file's content
        c->mapcount++;
        c->refs--;
    }
}

// A cancelled read completes: its frame (unless a pin keeps it) and slot
// are released, or the page-cache page's reference dropped.
void release(Mm& m, const Inflight& i) {
    if (i.kind == Inflight::Kind::SwapIn) {
        if (!i.pinned) free_frame(m, i.pa, 0);
        m.ssd->free_slot(i.slot);
    } else if (CachePage* c = find_page(*m.cache, i.file, i.index)) {
        c->refs--;
    }
}

}   // namespace

void complete_now(Mm& m, int pid, std::uint64_t va, sc_time now) {
    const Key k{pid, align_down(va, kPage)};
    auto it = m.inflight.find(k);
    if (it == m.inflight.end()) return;
    Inflight i = it->second;
    erase_inflight(m, it);   // its io_queue entry is skipped when reached
    if (i.done > now) i.done = now;
    if (m.io_guard) m.io_guard(i.pa, i.done);
    install(m, k, i);
    flush_mapped(m, i.done);
}

void complete_io(Mm& m, sc_time upto) {
    while (!m.zombies.empty() && m.zombies.begin()->first <= upto) {
        const Inflight i = m.zombies.begin()->second.second;
        m.zombies.erase(m.zombies.begin());
        release(m, i);
    }
    while (!m.io_queue.empty() && m.io_queue.begin()->first <= upto) {
        const sc_time t = m.io_queue.begin()->first;
        const Key k = m.io_queue.begin()->second;
        m.io_queue.erase(m.io_queue.begin());
        auto it = m.inflight.find(k);
        if (it == m.inflight.end() || it->second.done != t) continue;   // cancelled (its zombie released)
        const Inflight i = it->second;
        erase_inflight(m, it);
        install(m, k, i);
        flush_mapped(m, t);   // a device's copy of the translations (NetVM) learns it now
    }
}

}   // namespace mm

sc_core::sc_time Vm::complete_io(sc_core::sc_time upto) {
    mm::complete_io(*mm_, upto);
    return next_io();
}

sc_core::sc_time Vm::next_io() const {
    sc_core::sc_time t = sc_core::sc_max_time();
    if (!mm_->io_queue.empty()) t = mm_->io_queue.begin()->first;
    if (!mm_->zombies.empty() && mm_->zombies.begin()->first < t) t = mm_->zombies.begin()->first;
    return t;
}

void Vm::set_io_wake(std::function<void(sc_core::sc_time)> fn) { mm_->io_wake = std::move(fn); }

void Vm::set_io_guard(std::function<void(std::uint64_t, sc_core::sc_time)> fn) { mm_->io_guard = std::move(fn); }

}   // namespace vrdmasim
