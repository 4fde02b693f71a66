// MMU notifiers of the Vm (mmu_notifier.hpp; Linux's mm/mmu_notifier.c).
#include "models/os/mmu_notifier.hpp"

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

}  // namespace mm

void Vm::set_invalidate(InvalidateFn fn) {
    if (mm_->notifiers.empty())
        mm_->notifiers.push_back(std::move(fn));
    else
        mm_->notifiers.front() = std::move(fn);
}

void Vm::add_invalidate(InvalidateFn fn) {
    if (mm_->notifiers.empty()) mm_->notifiers.emplace_back();   // the first slot stays set_invalidate's
    mm_->notifiers.push_back(std::move(fn));
}

}  // namespace vrdmasim
