// The Vm's parameters (sections "vm" and "khugepaged", declared by
// Vm::declare_params in vm_params.cpp): the Vm's values, read once by
// read_vm_config; VmDaemons reads its own five through their handles.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "src/core/params.hpp"

namespace vrdmasim {

// The parameters of section [vm], declared in vm_params.cpp; read
// through params_of<VmParams>().
struct VmParams {
    VmParams();
    ParamSet set;
    EnumParam thp;
    RateParam copy_rate;
    SizeParam memlock_limit;
    TimeParam minor_fault;
    TimeParam zero_fill_page;
    TimeParam huge_zero_fill;
    TimeParam syscall;
    TimeParam pte_update;
    TimeParam pin_call;
    TimeParam pin_page;
    TimeParam user_access;
    SizeParam low_watermark;
    SizeParam high_watermark;
    IntParam direct_reclaim_pages;
    TimeParam swap_out_page;
    TimeParam major_fault;
    TimeParam scan_pte;
    TimeParam copy_page;
    BoolParam pins_block_thp_collapse;
    TimeParam kswapd_interval;
    TimeParam compact_interval;
    IntParam compact_pages;

private:
    // The constructor's groups of parameters, declared in this order.
    void declare_faults_and_pins();
    void declare_reclaim();
    void declare_daemons();
};

// The parameters of section [khugepaged], declared in vm_params.cpp; read
// through params_of<KhugepagedParams>().
struct KhugepagedParams {
    KhugepagedParams();
    ParamSet set;
    IntParam pages_to_scan;
    TimeParam scan_sleep;
    TimeParam alloc_sleep;
    IntParam max_ptes_none;
    IntParam max_ptes_swap;
};

struct VmConfig {
    std::string thp;   // always | madvise | never
    std::uint64_t memlock_limit;
    sc_core::sc_time minor_fault, zero_fill_page, huge_zero_fill, syscall, pte_update, pin_call, pin_page, user_access;
    // reclaim, khugepaged, compaction
    std::uint64_t low_wm, high_wm, direct_reclaim_pages, pages_to_scan, max_ptes_none, max_ptes_swap;
    bool pins_block_collapse;
    sc_core::sc_time swap_out_page, major_fault, scan_pte, copy_page;
};

// Reads every vm.* and khugepaged.* key; ConfigError when high-watermark is
// below low-watermark.
VmConfig read_vm_config(const Config& config);

}   // namespace vrdmasim
