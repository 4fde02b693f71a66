// khugepaged (mm/khugepaged.c): the pass that collapses 2 MiB ranges of
// 4 KiB pages into transparent huge pages, each collapse in two phases (PTEs
// cleared and bytes copied; block installed). Its state, and the calls the
// rest of the Vm makes on it; the Vm's entry points are in khugepaged.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "models/os/vm.hpp"

namespace vrdmasim {
namespace mm {

struct Mm;

// The khugepaged pass in progress (kept between collapse_begin calls, so
// that a pass interrupted by a collapse window goes on after it).
struct CollapsePass {
    bool active = false;
    std::size_t left = 0;   // ranges still to visit
    std::uint64_t scanned = 0;   // PTEs examined
    std::uint64_t collapsed = 0;   // collapses completed
    sc_core::sc_time pending = sc_core::SC_ZERO_TIME;   // scan CPU not yet charged
};

// The collapse whose window is open: PMD cleared, block filled, not yet installed.
struct OpenCollapse {
    bool open = false;
    int pid = 0;
    std::uint64_t base = 0, block = 0, table = 0;
    Prot prot = Prot::None;
    std::vector<std::uint64_t> old;   // old frames to free at install
    sc_core::sc_time clear, install;
    Tracer::Cause story;   // the collapse's step in the narrated story
};

struct Khugepaged {
    CollapsePass pass;
    OpenCollapse open;
};

// Whether [va, end) of pid lies in the range of the open collapse.
bool in_open(const Mm& m, int pid, std::uint64_t va, std::uint64_t end);
// Phase 2: install the block, free the old frames and the page table.
void collapse_finish(Mm& m);

}   // namespace mm
}   // namespace vrdmasim
