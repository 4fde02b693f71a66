// Page migration (mm/migrate.c): the migration whose window is open, its
// pages' PTEs migration entries until remove_migration_ptes; compaction
// (compaction.cpp) opens it, a fault or kcompactd closes it.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include <systemc>

namespace vrdmasim {
namespace mm {

struct Mm;

// The migration whose window is open: the pages' PTEs are migration
// entries, their bytes copied to the new frames; remapped at `install`.
struct Migration {
    bool open = false;
    struct Page {
        int pid;
        std::uint64_t va, slot, d, dst;   // d: the PTE before; dst: the new frame
    };
    std::vector<Page> pages;
    std::set<std::pair<int, std::uint64_t>> keys;   // (pid, va) of the pages, for the fault path
    std::vector<std::uint64_t> reserved;   // free frames of the block held during the window
    sc_core::sc_time clear, install;
};

bool in_migration(const Mm& m, int pid, std::uint64_t va, std::uint64_t end);
// The new frame of a page being migrated (0 if va is not one).
std::uint64_t migration_dst(const Mm& m, int pid, std::uint64_t va);
// remove_migration_ptes: the pages remapped to their new frames.
void migration_finish(Mm& m);

}   // namespace mm
}   // namespace vrdmasim
