// MMU notifiers of the Vm (mmu_notifier.hpp; Linux's mm/mmu_notifier.c).
#include "models/os/mmu_notifier.hpp"

#include <algorithm>

#include "models/os/pgtable.hpp"

namespace vrdmasim {
namespace mm {

sc_core::sc_time invalidate(Mm& m, Process& p, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
    bool any = false;
    for (const auto& fn : m.notifiers) any = any || static_cast<bool>(fn);
    if (!any) return at;
    m.stats.invalidations.inc();
    // Chained: each notifier starts when the one before it returned.
    sc_core::sc_time t = at;
    for (const auto& fn : m.notifiers)
        if (fn) t = max_time(t, fn(p.pid, p.asid, va, len, t));
    return t;
}

bool leaf_of(Mm& m, int pid, std::uint64_t va, VmLeaf& l) {
    auto p = m.procs.find(pid);
    if (p == m.procs.end() || (va >> 48) != 0) return false;
    int level = 0;
    const std::uint64_t d = leaf(m, p->second, va, nullptr, &level);
    if (!(d & aarch64::kValid)) return false;
    l.pid = pid;
    l.size = level == 2 ? kHuge : kPage;
    l.va = align_down(va, l.size);
    l.pa = d & aarch64::kAddrMask;
    l.writable = !(d & aarch64::kApReadOnly);
    return true;
}

sc_core::sc_time flush_mapped(Mm& m, sc_core::sc_time at) {
    if (!m.map_notifier || m.mapped.empty()) return at;
    std::vector<VmLeaf> leaves;
    std::vector<Key> keys;
    keys.swap(m.mapped);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (const Key& k : keys) {
        VmLeaf l;
        if (leaf_of(m, k.first, k.second, l)) leaves.push_back(l);   // else gone again before the call ended
    }
    if (leaves.empty()) return at;
    return max_time(at, m.map_notifier(leaves, at));
}

bool device_locked(const Mm& m, int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
    if (!m.page_lock) return false;
    for (std::uint64_t a = align_down(va, kPage); a < va + len; a += kPage)
        if (m.page_lock(pid, a, at)) return true;
    return false;
}

}   // namespace mm

bool Vm::present_leaf(int pid, std::uint64_t va, VmLeaf& out) { return leaf_of(*mm_, pid, va, out); }

void Vm::set_map_notifier(MapFn fn) { mm_->map_notifier = std::move(fn); }

void Vm::set_page_lock(PageLockFn fn) {
    mm::Mm& m = *mm_;
    m.page_lock = std::move(fn);
    // Registered only with a device that locks pages (a run without one
    // keeps its statistics as they were).
    const std::string prefix = m.prefix;
    if (!m.locked_skips[0]) {
        m.locked_skips[0] = &m.ctx.stats.counter(prefix + ".reclaim_skipped_locked", "",
                                                 "pages reclaim skipped because the NI held them locked");
        m.locked_skips[1] = &m.ctx.stats.counter(prefix + ".migrate_skipped_locked", "",
                                                 "pages compaction skipped (their block not chosen) because the NI "
                                                 "held them locked");
        m.locked_skips[2] = &m.ctx.stats.counter(prefix + ".collapse_skipped_locked", "",
                                                 "khugepaged ranges skipped because the NI held a page locked");
    }
}

void Vm::set_invalidate(InvalidateFn fn) {
    if (mm_->notifiers.empty()) mm_->notifiers.push_back(std::move(fn));
    else mm_->notifiers.front() = std::move(fn);
}

void Vm::add_invalidate(InvalidateFn fn) {
    if (mm_->notifiers.empty()) mm_->notifiers.emplace_back();   // the first slot stays set_invalidate's
    mm_->notifiers.push_back(std::move(fn));
}

}   // namespace vrdmasim
