// Registration of the Vm's statistics (VmStats, vmstat.hpp).
#include "models/os/vmstat.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

VmStats::VmStats(StatRegistry& s, const std::string& prefix)
    : swap_outs(s.counter(prefix + ".swap_outs", "", "4 KiB pages written to swap by reclaim")),
      swap_ins(s.counter(prefix + ".swap_ins", "", "4 KiB pages read back from swap")),
      faults_major(s.counter(prefix + ".faults_major", "", "faults on swapped-out pages")),
      reclaim_scans(s.counter(prefix + ".reclaim_scans", "", "reclaim passes (kswapd or direct)")),
      pages_scanned(s.counter(prefix + ".pages_scanned", "", "leaves examined by reclaim's clock")),
      direct_reclaims(s.counter(prefix + ".direct_reclaims", "", "reclaims run by a failed allocation")),
      collapses(s.counter(prefix + ".collapses", "", "2 MiB ranges collapsed by khugepaged")),
      collapse_failed_alloc(
          s.counter(prefix + ".collapse_failed_alloc", "", "khugepaged collapses abandoned: no order-9 frame")),
      collapse_skipped_pinned(
          s.counter(prefix + ".collapse_skipped_pinned", "", "khugepaged ranges skipped because a page is pinned")),
      stale_pins(s.counter(prefix + ".stale_pins", "",
                           "pinned 4 KiB pages whose VA was remapped by a collapse (pin refers to "
                           "a frame no longer mapped)")),
      khugepaged_scanned(s.counter(prefix + ".khugepaged_scanned", "", "PTEs examined by khugepaged")),
      pages_migrated(s.counter(prefix + ".pages_migrated", "", "4 KiB pages moved by compaction")),
      compactions(s.counter(prefix + ".compactions", "", "compaction runs")),
      compactions_failed(s.counter(prefix + ".compactions_failed", "", "compaction runs that freed no 2 MiB block")),
      migration_waits(s.counter(prefix + ".migration_waits", "",
                                "faults that found a migration entry and waited for the migration "
                                "to finish (__migration_entry_wait)")),
      migration_window(s.histogram(prefix + ".migration_window", "us",
                                   "PTEs replaced by migration entries to new frames mapped, per "
                                   "compaction")),
      collapse_window(s.histogram(prefix + ".collapse_window", "us", "PTEs cleared to block installed, per collapse")),
      faults_minor(s.counter(prefix + ".faults_minor", "", "4 KiB zero-fill faults")),
      faults_huge(s.counter(prefix + ".faults_huge", "", "2 MiB (THP) zero-fill faults")),
      faults_af(s.counter(prefix + ".faults_af", "", "access-flag faults on present pages")),
      zero_fills(s.counter(prefix + ".zero_fills", "", "4 KiB pages cleared (a THP counts 512)")),
      pages_mapped(s.counter(prefix + ".pages_mapped", "", "4 KiB pages made present by faults")),
      pages_pinned(s.counter(prefix + ".pages_pinned", "", "4 KiB page pins taken")),
      mmaps(s.counter(prefix + ".mmaps", "", "mmap calls")),
      munmaps(s.counter(prefix + ".munmaps", "", "munmap calls")),
      mprotects(s.counter(prefix + ".mprotects", "", "mprotect calls")),
      madvises(s.counter(prefix + ".madvises", "", "madvise calls")),
      mlocks(s.counter(prefix + ".mlocks", "", "mlock calls")),
      invalidations(s.counter(prefix + ".invalidations", "", "invalidate (MMU notifier) calls")),
      memlock_refusals(s.counter(prefix + ".memlock_refusals", "", "mlock/pin refused by RLIMIT_MEMLOCK")),
      pin_no_memory(s.counter(prefix + ".pin_no_memory", "",
                              "pins refused with ENOMEM: the page frames could not hold the range resident (a pinned "
                              "page never leaves memory)")),
      huge_splits(s.counter(prefix + ".huge_splits", "", "2 MiB mappings split into 4 KiB pages")),
      frames_freed(s.counter(prefix + ".frames_freed", "", "4 KiB frames given back (a THP counts 512)")),
      fault_time(s.histogram(prefix + ".fault_time", "us",
                             "touch/fault_in service time (done - at) when a fault was taken")) {}

void Vm::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("faults_minor",
                     "Zero-fill page faults served by the VMs, 4 KiB (`faults_minor`) and 2 MiB THP "
                     "(`faults_huge`).",
                     {"faults_minor", "faults_huge"});
    reg.sum_counters("faults_major", "Faults on swapped-out pages (read back from the SSD).", {"faults_major"});
    reg.sum_counters("pages_pinned", "4 KiB page pins taken by the VMs.", {"pages_pinned"});
    reg.sum_counters("swap_outs", "4 KiB pages written to swap by reclaim.", {"swap_outs"});
    reg.sum_counters("swap_ins", "4 KiB pages read back from swap.", {"swap_ins"});
    reg.sum_counters("thp_collapses", "2 MiB ranges collapsed by khugepaged.", {"collapses"});
    reg.sum_counters("thp_splits", "2 MiB mappings split into 4 KiB pages.", {"huge_splits"});
    reg.sum_counters("invalidations", "MMU-notifier invalidate calls made by the VMs (`*.vm.invalidations`).",
                     {"vm.invalidations"});
}

}   // namespace vrdmasim
