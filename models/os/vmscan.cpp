// Reclaim to the swap Ssd (vmscan.hpp): the LRU, the clock (second chance
// over the access flag), swap-out of a page and Vm::reclaim (kswapd's and
// direct reclaim's pass; mm/vmscan.c, swap slots as mm/swapfile.c).
#include "models/os/vmscan.hpp"

#include <stdexcept>

#include "models/os/gup.hpp"
#include "models/os/huge_memory.hpp"
#include "models/os/inflight.hpp"
#include "models/os/mmap.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/page_alloc.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/syscall.hpp"

namespace vrdmasim {
namespace mm {

using namespace aarch64;
using sc_core::sc_time;

void res_set(Mm& m, int pid, std::uint64_t va, bool valid) {
    ++m.leaf_generation;
    if (valid) {
        m.resident.insert({pid, va});
        if (m.map_notifier) m.mapped.push_back({pid, va});
    } else m.resident.erase({pid, va});
}

void res_clear(Mm& m, int pid, std::uint64_t va, std::uint64_t end) {
    ++m.leaf_generation;
    m.resident.erase(m.resident.lower_bound({pid, va}), m.resident.lower_bound({pid, end}));
}

sc_time complete(Mm& m, Batch& b, sc_time t) {
    for (const auto& i : b.invs) t = invalidate(m, m.procs.at(i.pid), i.va, i.len, t);
    sc_time end = t;
    for (auto& wv : b.writes) end = max_time(end, m.ssd->write_page(wv.first, wv.second.data(), t));
    for (std::uint64_t pa : b.frees) free_frame(m, pa, 0);
    b.invs.clear();
    b.writes.clear();
    b.frees.clear();
    return end;
}

namespace {

// Swap one present 4 KiB page out (PTE -> swap entry); false if swap is full.
bool evict(Mm& m, Process& p, std::uint64_t va, Batch& b, Work& w) {
    std::uint64_t slot_addr = 0;
    int level = 0;
    const std::uint64_t d = leaf(m, p, va, &slot_addr, &level);
    if (level != 3 || !(d & kValid)) throw std::logic_error("Vm: evicting a page that is not a present PTE");
    auto s = m.ssd->alloc_slot();
    if (!s) return false;
    std::vector<unsigned char> bytes(kPage);
    access(m, false, d & kAddrMask, bytes.data(), kPage);
    wr(m, slot_addr, swap_entry(*s));
    res_set(m, p.pid, va, false);
    w.cpu += m.params.swap_out_page + m.params.pte_update;
    b.inv(p.pid, va, kPage);
    b.writes.emplace_back(*s, std::move(bytes));
    b.frees.push_back(d & kAddrMask);
    b.evicted++;
    m.stats.swap_outs.inc();
    tell(m, w, p.pid, va, [&] {
        return "swap-out of " + Tracer::hex(va) + " (pid " + std::to_string(p.pid) +
               "): not referenced since the clock last passed (AF clear), its PTE becomes a swap entry for slot " +
               std::to_string(*s) + "; frame " + Tracer::hex(d & kAddrMask) +
               " is freed once the SMMU's TLBs are invalidated and the SSD write is issued";
    });
    return true;
}

// One step of the clock at leaf x; false when swap is full.
bool visit(Mm& m, const Key& x, std::uint64_t target_pages, Batch& b, Work& w) {
    m.reclaim_hand = {x.first, x.second + 1};
    Process& p = m.procs.at(x.first);
    const Vma* v = find_vma(p, x.second);
    if (!v || v->locked || v->prot == Prot::None) return true;   // not on the LRU (unevictable)
    std::uint64_t slot_addr = 0;
    int level = 0;
    const std::uint64_t d = leaf(m, p, x.second, &slot_addr, &level);
    if (!(d & kValid)) return true;
    if (v->file >= 0) return visit_file(m, p, x.second, b, w);   // a file page: unmapped, dropped when clean
    if (level == 2 && x.second + kHuge > v->end) return true;   // a block across VMAs: left alone
    m.stats.pages_scanned.inc();
    w.cpu += m.params.scan_pte;
    const std::uint64_t size = level == 2 ? kHuge : kPage;
    if (any_pin(p, x.second, size)) return true;
    if (device_locked(m, p.pid, x.second, size, w.at + w.cpu)) {   // the NI is accessing it (NetVM)
        m.locked_skips[0]->inc();
        return true;
    }
    if (d & kAf) {   // referenced: second chance
        wr(m, slot_addr, d & ~kAf);
        w.cpu += m.params.pte_update;
        b.inv(p.pid, x.second, size);
        return true;
    }
    if (level == 2) {   // an old huge page: split, then swap out its pages
        tell(m, w, p.pid, x.second, [&] {
            return "reclaim splits the old 2 MiB huge page at " + Tracer::hex(x.second) + " to swap out its pages";
        });
        try {
            split_block(m, p, x.second, w);
        } catch (const OutOfFrames&) {
            return true;   // no frame for its page table even in the reserve: leave it
        }
        b.inv(p.pid, x.second, kHuge);
        for (unsigned i = 0; i < 512 && m.frames.free_pages() + b.frees.size() < target_pages; ++i)
            if (!evict(m, p, x.second + i * kPage, b, w)) return false;
        return true;
    }
    return evict(m, p, x.second, b, w);
}

}   // namespace

// The clock: at most two sweeps over the reclaimable present leaves
// (`resident` in unlocked, accessible VMAs; a 2 MiB block only when it
// lies wholly inside one VMA), in (pid, va) order from the hand. AF set:
// cleared (second chance); AF clear: evicted (a block is split first).
// Stops when free + pending frees >= target_pages. The walk follows the
// list as it changes: a page evicted earlier in the pass has left it.
void scan(Mm& m, std::uint64_t target_pages, Batch& b, Work& w) {
    if (!m.ssd) return;
    m.stats.reclaim_scans.inc();
    shrink_cache(m, target_pages, b, w);   // clean unmapped page-cache pages first (pagecache.cpp)
    auto enough = [&] { return m.frames.free_pages() + b.frees.size() >= target_pages; };
    if (enough() || m.resident.empty()) return;
    auto it = m.resident.lower_bound({m.reclaim_hand.pid, m.reclaim_hand.va});
    if (it == m.resident.end()) it = m.resident.begin();
    const Key start = *it;
    unsigned laps = 0;   // wraps past the end of the list
    while (!enough()) {
        const Key x = *it;
        if (!visit(m, x, target_pages, b, w)) return;   // swap full
        it = m.resident.upper_bound(x);
        if (it == m.resident.end()) {
            if (++laps > 2 || m.resident.empty()) return;
            it = m.resident.begin();
        }
        if (laps == 2 && *it >= start) return;   // two whole sweeps done
    }
}

}   // namespace mm

using namespace mm;

void Vm::set_swap(Ssd& ssd) { mm_->ssd = &ssd; }

bool Vm::swapped(int pid, std::uint64_t va) const {
    auto it = mm_->procs.find(pid);
    if (it == mm_->procs.end() || (va >> 48) != 0) return false;
    int level = 0;
    return is_swap(leaf(*mm_, it->second, va, nullptr, &level)) && level == 3;
}

VmResult Vm::reclaim(std::uint64_t target_free_bytes, sc_core::sc_time at) {
    Mm& m = *mm_;
    mm::complete_io(m, io_clock(at));   // pages whose reads are done are on the LRU (inflight.hpp)
    Work w;
    w.at = at;
    Batch b;
    scan(m, round_up(target_free_bytes, kPage) / kPage, b, w);
    VmResult r;
    r.done = complete(m, b, run_work(m, "kswapd", at, w, [&] {
                                return "reclaim (kswapd) wants " + std::to_string(target_free_bytes) +
                                       " B free: the clock scans from its hand, clearing AF on referenced pages "
                                       "(a second chance) and swapping out the others";
                            }).end);
    r.value = b.evicted;
    r.error = free_bytes() >= target_free_bytes ? VmError::Ok : VmError::NoMemory;
    return r;
}

}   // namespace vrdmasim
