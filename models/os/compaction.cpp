// Compaction (Linux's mm/compaction.c, its migration as migrate_pages_batch
// in mm/migrate.c): pick the 2 MiB physical block with the fewest movable
// pages and no unmovable one, migrate them out in two phases (migrate.hpp
// holds the open migration), and the Vm's entry points compact,
// compact_begin and compact_end.
#include <map>
#include <optional>

#include "models/os/inflight.hpp"
#include "models/os/migrate.hpp"
#include "models/os/mm.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {
namespace {

using namespace aarch64;
using sc_core::sc_time;

struct Movable {
    int pid;
    std::uint64_t va, slot, d;
};

// The movable pages by 2 MiB physical block, and the blocks holding an
// unmovable frame (tables, blocks, PROT_NONE and pinned pages, orphans, an
// open collapse's frames); w charged a scan-pte per leaf.
void find_movable(Mm& m, std::map<std::uint64_t, std::vector<Movable>>& movable,
                  std::map<std::uint64_t, bool>& unmovable, Work& w) {
    auto mark = [&](std::uint64_t pa) { unmovable[align_down(pa, kHuge)] = true; };
    for (auto& pp : m.procs) {
        Process& p = pp.second;
        walk_all(m, p, mark, [&](std::uint64_t va, std::uint64_t slot, std::uint64_t d, int level) {
            w.cpu += m.params.scan_pte;
            if (!has_frame(d)) return;   // swap entries
            const std::uint64_t pa = d & kAddrMask;
            const bool locked = level == 3 && (d & kValid) && device_locked(m, p.pid, va, kPage, w.at + w.cpu);
            if (locked) m.locked_skips[1]->inc();   // the NI is accessing it (NetVM)
            if (level == 3 && (d & kValid) && !p.pins.count(va) && !locked && !cache_frame(m, pa))
                movable[align_down(pa, kHuge)].push_back({p.pid, va, slot, d});
            else mark(pa);
        });
        for (const auto& o : p.orphans) mark(o.second.pa);
    }
    const OpenCollapse& open = m.khugepaged.open;
    if (open.open) {   // a collapse window: its old frames and table are still allocated
        for (std::uint64_t pa : open.old) mark(pa);
        mark(open.table);
    }
}

// Phase 1 of a compaction run (migrate_pages_batch, mm/migrate.c): pick
// the block; allocate the new frames; replace every PTE by a migration
// entry (try_to_migrate); invalidate the cached translations (MMU
// notifiers: the SMMU); copy the bytes. The window is open until the
// install time returned in done; migration_finish is phase 2.
VmResult compact_begin(Mm& m, std::uint64_t max_pages, sc_time at) {
    if (m.mig.open) {   // the caller did not end the last window: end it at its time
        at = max_time(at, m.mig.install);
        migration_finish(m);
    }
    m.stats.compactions.inc();
    Work w;
    w.at = at;
    std::map<std::uint64_t, std::vector<Movable>> movable;   // by 2 MiB physical block
    std::map<std::uint64_t, bool> unmovable;
    find_movable(m, movable, unmovable, w);
    // The block with the fewest movable pages, no unmovable one, not more
    // than max_pages (ties: the lowest address).
    std::uint64_t best = ~0ull;
    std::size_t best_n = 0;
    for (const auto& kv : movable)
        if (!unmovable.count(kv.first) && kv.second.size() <= max_pages &&
            (best == ~0ull || kv.second.size() < best_n)) {
            best = kv.first;
            best_n = kv.second.size();
        }
    VmResult res;
    res.error = VmError::NoMemory;
    if (best == ~0ull) {
        m.stats.compactions_failed.inc();
        res.done = m.cpu.run("kcompactd", at, w.cpu).end;
        return res;
    }
    // The new frames first (free frames inside the block are held, so
    // that no copy lands there), then the PTEs replaced by migration
    // entries at the end of the scan.
    m.mig_blocks_before = m.frames.free_blocks(FrameAllocator::kMaxOrder);
    Migration mg;
    for (const Movable& mv : movable[best]) {
        std::optional<std::uint64_t> dst;
        while ((dst = m.frames.alloc(0)) && align_down(*dst, kHuge) == best) mg.reserved.push_back(*dst);
        if (!dst) break;
        mg.pages.push_back({mv.pid, mv.va, mv.slot, mv.d, *dst});
        mg.keys.insert({mv.pid, mv.va});
    }
    const sc_time t_clear = m.cpu.run("kcompactd", at, w.cpu).end;
    Batch b;
    for (const auto& pg : mg.pages) {
        wr(m, pg.slot, (pg.d & kAddrMask) | kSwMigration);
        res_set(m, pg.pid, pg.va, false);
        b.inv(pg.pid, pg.va, kPage);
    }
    sc_time t = m.cpu.run("kcompactd", t_clear, m.params.pte_update * static_cast<double>(mg.pages.size())).end;
    for (const auto& i : b.invs) t = invalidate(m, m.procs.at(i.pid), i.va, i.len, t);   // before the copy
    std::vector<unsigned char> bytes(kPage);
    for (const auto& pg : mg.pages) {
        access(m, false, pg.d & kAddrMask, bytes.data(), kPage);
        access(m, true, pg.dst, bytes.data(), kPage);
    }
    const sc_time t_install =
        m.cpu.run("kcompactd", t, (m.params.copy_page + m.params.pte_update) * static_cast<double>(mg.pages.size()))
            .end;
    m.stats.pages_migrated.inc(mg.pages.size());
    res.value = mg.pages.size();
    res.done = t_install;
    mg.open = true;
    mg.clear = t_clear;
    mg.install = t_install;
    m.mig = std::move(mg);
    return res;
}

// Phase 2 by the caller at the install time: the pages remapped, the
// block given back. Ok if a 2 MiB block was freed.
VmResult compact_end(Mm& m, sc_time at) {
    VmResult r;
    r.done = at;
    r.error = VmError::NoMemory;
    if (!m.mig.open) return r;
    r.done = max_time(at, m.mig.install);
    r.value = m.mig.pages.size();
    migration_finish(m);
    if (m.frames.free_blocks(FrameAllocator::kMaxOrder) > m.mig_blocks_before) r.error = VmError::Ok;
    else m.stats.compactions_failed.inc();
    return r;
}

}   // namespace
}   // namespace mm

// Both phases in one call.
VmResult Vm::compact(std::uint64_t max_pages, sc_core::sc_time at) {
    mm::complete_io(*mm_, mm::io_clock(at));   // reads done by now have their PTEs (inflight.hpp)
    VmResult r = mm::compact_begin(*mm_, max_pages, at);
    if (!mm_->mig.open) return r;
    const VmResult e = mm::compact_end(*mm_, r.done);
    r.error = e.error;
    return r;
}

VmResult Vm::compact_begin(std::uint64_t max_pages, sc_core::sc_time at) {
    mm::complete_io(*mm_, mm::io_clock(at));
    return mm::compact_begin(*mm_, max_pages, at);
}

VmResult Vm::compact_end(sc_core::sc_time at) { return mm::compact_end(*mm_, at); }

}   // namespace vrdmasim
