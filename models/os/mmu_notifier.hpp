// MMU notifiers (mm/mmu_notifier.c): the callbacks that make cached
// translations (the SMMU's, a registration cache's) forget a range before
// its old frames are reused.
#pragma once

#include <cstdint>

#include <systemc>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// Call every notifier on (p, [va, va+len)), chained from `at`; the time the
// last one returned (`at` when none is set).
sc_core::sc_time invalidate(Mm& m, Process& p, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);

}  // namespace mm
}  // namespace vrdmasim
