// The Vm's parameters (sections "vm" and "khugepaged", declared by
// Vm::declare_params in vm_params.cpp): every read of them, for the Vm and
// for VmDaemons, is in read_vm_params, so that each key is spelled once at
// its read.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "core/params.hpp"

namespace vrdmasim {

struct VmParams {
    std::string thp;   // always | madvise | never
    std::uint64_t memlock_limit;
    sc_core::sc_time minor_fault, zero_fill_page, huge_zero_fill, syscall, pte_update, pin_call, pin_page,
        user_access;
    // reclaim, khugepaged, compaction
    std::uint64_t low_wm, high_wm, direct_reclaim_pages, pages_to_scan, max_ptes_none, max_ptes_swap;
    bool pins_block_collapse;
    sc_core::sc_time swap_out_page, major_fault, scan_pte, copy_page;
    // VmDaemons
    sc_core::sc_time kswapd_interval, scan_sleep, alloc_sleep, compact_interval;
    std::uint64_t compact_pages;
};

// Reads every vm.* and khugepaged.* key; ConfigError when high-watermark is
// below low-watermark.
VmParams read_vm_params(const Config& config);

}  // namespace vrdmasim
