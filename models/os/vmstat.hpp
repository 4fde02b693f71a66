// The Vm's statistics (`<prefix>.*`, e.g. node0.vm.faults_minor; Linux's
// /proc/vmstat counters of mm/vmstat.c play the same part): one record,
// registered in one place (vmstat.cpp), in the order the statistics appear.
#pragma once

#include <string>

#include "src/core/stats.hpp"

namespace vrdmasim {

struct VmStats {
    VmStats(StatRegistry& stats, const std::string& prefix);

    // reclaim and swap, khugepaged, compaction
    Counter &swap_outs, &swap_ins, &faults_major, &reclaim_scans, &pages_scanned, &direct_reclaims, &collapses,
        &collapse_failed_alloc, &collapse_skipped_pinned, &stale_pins, &khugepaged_scanned, &pages_migrated,
        &compactions, &compactions_failed, &migration_waits;
    Histogram& migration_window;
    Histogram& collapse_window;
    // faults, system calls, pins, notifiers
    Counter &faults_minor, &faults_huge, &faults_af, &zero_fills, &pages_mapped, &pages_pinned, &mmaps, &munmaps,
        &mprotects, &madvises, &mlocks, &invalidations, &memlock_refusals, &pin_no_memory, &huge_splits, &frames_freed;
    Histogram& fault_time;
};

}   // namespace vrdmasim
