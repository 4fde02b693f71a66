// Transparent huge pages (mm/huge_memory.c): whether a VMA may have them
// (vm.thp and MADV_HUGEPAGE / MADV_NOHUGEPAGE), the 2 MiB zero-fill fault
// (do_huge_pmd_anonymous_page) and splitting a block mapping into 512 pages
// (split_huge_pmd). Collapsing pages back into a block is khugepaged's.
#pragma once

#include <cstdint>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

bool thp_allowed(const Mm& m, const Vma& v);
// The THP fault for va in v (starting at vstart), its leaf slot `at` at
// `level`: a zeroed 2 MiB block when THP is allowed, the range lies inside
// the VMA, no page of it is mapped and a 2 MiB frame is free. True when it
// answered (e: Ok, next = the block's end, or NoMemory); false: the caller
// falls back to a 4 KiB page.
bool huge_fault(Mm& m, Process& p, const Vma& v, std::uint64_t vstart, std::uint64_t va, std::uint64_t at, int level,
                Work& w, std::uint64_t& next, VmError& e);
// Replace the 2 MiB block mapping at `base` (present or PROT_NONE) by 512
// page descriptors with the same attributes and frames; the frame is split
// into order-0 frames. Charges 512 PTE writes. OutOfFrames if no table frame.
void split_block(Mm& m, Process& p, std::uint64_t base, Work& w);

}   // namespace mm
}   // namespace vrdmasim
