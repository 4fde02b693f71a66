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

// The present leaf mapping va of pid, as the map notifier is told it.
bool leaf_of(Mm& m, int pid, std::uint64_t va, VmLeaf& l);

// Tell the map notifier the leaves made present since the last call (those
// still present), from `at`; the time it returned (`at` when none).
sc_core::sc_time flush_mapped(Mm& m, sc_core::sc_time at);

// Whether a device holds a 4 KiB page of [va, va+len) of `pid` locked at `at`.
bool device_locked(const Mm& m, int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);

}   // namespace mm
}   // namespace vrdmasim
