// The address space of a process (mm/mmap.c, mm/vma.c): its VMAs, looked up,
// split and changed over a range. The system calls on it are in mmap.cpp
// (mmap, munmap), mprotect.cpp, madvise.cpp and mlock.cpp.
#pragma once

#include <cstdint>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

constexpr std::uint64_t kMmapBase = 0x7f0000000000ull;   // top of the mmap area (top-down)
constexpr std::uint64_t kMmapMin = 0x10000ull;   // vm.mmap_min_addr default (64 KiB)

// The process pid, or nullptr.
Process* proc(Mm& m, int pid);
// The VMA holding va (its start in *start), or nullptr.
Vma* find_vma(Process& p, std::uint64_t va, std::uint64_t* start = nullptr);
// Split the VMA holding a so that one starts at a.
void split_vma_at(Process& p, std::uint64_t a);
// Every byte of [va, end) lies in some VMA.
bool covered(Process& p, std::uint64_t va, std::uint64_t end);

// Split the VMAs at va and end, then f(start, vma) on each VMA of [va, end)
// (vma_modify).
template <class F>
void modify_vmas(Process& p, std::uint64_t va, std::uint64_t end, F f) {
    split_vma_at(p, va);
    split_vma_at(p, end);
    for (auto it = p.vmas.lower_bound(va); it != p.vmas.end() && it->first < end; ++it) f(it->first, it->second);
}

}   // namespace mm
}   // namespace vrdmasim
