// Page migration (migrate.hpp; Linux's mm/migrate.c): the open migration's
// pages, the new frame of a page being migrated, and remove_migration_ptes
// at the end of its window; the Vm's inspection of it.
#include "models/os/mmu_notifier.hpp"
#include "models/os/migrate.hpp"

#include "models/os/mm.hpp"
#include "models/os/page_alloc.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

using namespace aarch64;

bool in_migration(const Mm& m, int pid, std::uint64_t va, std::uint64_t end) {
    if (!m.mig.open) return false;
    auto it = m.mig.keys.lower_bound({pid, va});
    return it != m.mig.keys.end() && it->first == pid && it->second < end;
}

std::uint64_t migration_dst(const Mm& m, int pid, std::uint64_t va) {
    if (!in_migration(m, pid, align_down(va, kPage), align_down(va, kPage) + kPage)) return 0;
    for (const auto& pg : m.mig.pages)
        if (pg.pid == pid && pg.va == align_down(va, kPage)) return pg.dst;
    return 0;
}

// remove_migration_ptes: every migration entry becomes a PTE to the new
// frame; the old frames go (their translations were invalidated when
// the entries were written) and the block's held free frames are let go.
void migration_finish(Mm& m) {
    if (!m.mig.open) return;
    for (const auto& pg : m.mig.pages) {
        wr(m, pg.slot, (pg.d & ~kAddrMask) | pg.dst);
        res_set(m, pg.pid, pg.va, (pg.d & kValid) != 0);
        free_frame(m, pg.d & kAddrMask, 0);
    }
    for (std::uint64_t pa : m.mig.reserved) m.frames.free(pa, 0);
    m.stats.migration_window.add(to_us(m.mig.install - m.mig.clear));
    m.ctx.tracer.span(m.track, "migration-window", m.mig.clear, m.mig.install);
    const sc_core::sc_time install = m.mig.install;
    m.mig = Migration{};
    flush_mapped(m, install);
}

}   // namespace mm

using namespace mm;

bool Vm::migrating(int pid, std::uint64_t va) const {
    const std::uint64_t page = align_down(va, kPage);
    return in_migration(*mm_, pid, page, page + kPage);
}

VmMigration Vm::migrating() const {
    const Migration& mig = mm_->mig;
    VmMigration r;
    r.open = mig.open;
    r.pages = mig.pages.size();
    r.clear = mig.clear;
    r.install = mig.install;
    return r;
}

}   // namespace vrdmasim
