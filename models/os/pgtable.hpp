// The Vm's page tables: ARMv8 stage-1 tables in the node's DRAM (the
// descriptor format of models/common/aarch64_descriptors.hpp, the same
// tables an SMMU context bank walks), read and written through the debug
// transport; the software bits of non-present entries (PROT_NONE, swap and
// migration entries, as Linux arm64's pgtable-prot.h and swapops.h); leaf
// lookup, translation and a walk over every table.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/aarch64_descriptors.hpp"
#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// Software bit of a descriptor whose valid bit is clear: a PROT_NONE mapping
// that keeps its frame (Linux arm64's PTE_PROT_NONE is bit 58; bits [58:55]
// are ignored by the hardware walker, so the SMMU sees a translation fault).
constexpr std::uint64_t kSwProtNone = 1ull << 58;
// Software bit of a swap entry (valid bit clear): the page is on the swap
// device, its slot number in bits [47:12] (Linux arm64 keeps the swap type and
// offset in a non-present PTE the same way). Never set with kSwProtNone.
constexpr std::uint64_t kSwSwap = 1ull << 57;
inline std::uint64_t swap_entry(std::uint64_t slot) { return ((slot << 12) & 0x0000fffffffff000ull) | kSwSwap; }
inline std::uint64_t swap_slot(std::uint64_t d) { return (d & 0x0000fffffffff000ull) >> 12; }
inline bool is_swap(std::uint64_t d) { return !(d & 1) && (d & kSwSwap); }
// Software bit of a migration entry (valid bit clear): the page is being
// migrated, the old frame's address kept in the entry (Linux's migration
// swap entry holds the pfn the same way, mm/migrate.c). A fault on it waits
// for the migration to finish (__migration_entry_wait); the SMMU's walker
// sees a translation fault.
constexpr std::uint64_t kSwMigration = 1ull << 56;
inline bool is_migration(std::uint64_t d) { return !(d & 1) && (d & kSwMigration); }
inline bool has_frame(std::uint64_t d) { return (d & aarch64::kValid) || (d & kSwProtNone); }

// DRAM by physical address, untimed (the time is charged as CPU work).
void access(Mm& m, bool write, std::uint64_t pa, unsigned char* data, std::uint64_t len);
// The same with the data pattern's bytes from `at` (DebugAccess::debug_pattern).
void access_pattern(Mm& m, PatternOp op, std::uint64_t pa, std::uint64_t len, PatternPlace at, std::uint64_t& first);
std::uint64_t rd(Mm& m, std::uint64_t pa);
void wr(Mm& m, std::uint64_t pa, std::uint64_t v);
void zero(Mm& m, std::uint64_t pa, std::uint64_t len);

// A zeroed frame for a page table (pte_alloc); OutOfFrames if none.
std::uint64_t alloc_table(Mm& m);

// Address of the descriptor that is (or would be) the leaf for va: the
// level-2 entry when it is not a table (empty, block, PROT_NONE block),
// else the level-3 entry; 0 when no level-2 table exists. A walk in the
// region of p's last walk that reached a level-3 table, with no descriptor
// written since (Process::walk_*), reads only the leaf's slot.
std::uint64_t leaf_slot(Mm& m, const Process& p, std::uint64_t va, int& level);
// The leaf descriptor for va (0 if none) and its slot/level.
std::uint64_t leaf(Mm& m, const Process& p, std::uint64_t va, std::uint64_t* slot = nullptr, int* level = nullptr);
// The physical address of va under valid leaf d found at `level`.
inline std::uint64_t leaf_pa(std::uint64_t d, int level, std::uint64_t va) {
    const std::uint64_t size = level == 2 ? kHuge : kPage;
    return (d & aarch64::kAddrMask & ~(size - 1)) + (va & (size - 1));
}
// Address of the level-2 descriptor for va (a table must lead to it).
std::uint64_t l2_slot(Mm& m, const Process& p, std::uint64_t va);
// The physical address backing va, if a valid leaf maps it.
bool translate(Mm& m, const Process& p, std::uint64_t va, std::uint64_t& pa);
// The descriptor attributes of a user mapping with protection prot.
PageTableWriter::Attrs attrs(Prot prot);
// The same for a leaf of VMA v: its protection and its user-access guard.
PageTableWriter::Attrs attrs(const Vma& v);
// Descriptor d (with a frame) given the AP bits of VMA v's protection and guard.
std::uint64_t with_user_access(std::uint64_t d, const Vma& v);

// Visit every table frame and leaf of p.
template <class TableFn, class LeafFn>
void walk_all(Mm& m, const Process& p, TableFn on_table, LeafFn on_leaf) {
    using namespace aarch64;
    struct Rec {
        std::uint64_t table, va;
        int level;
    };
    std::vector<Rec> stack{{p.pt->root(), 0, start_level(16)}};
    on_table(p.pt->root());
    while (!stack.empty()) {
        const Rec r = stack.back();
        stack.pop_back();
        for (unsigned i = 0; i < 512; ++i) {
            const std::uint64_t at = r.table + 8ull * i;
            const std::uint64_t d = rd(m, at);
            if (!d) continue;
            const std::uint64_t va = r.va | (static_cast<std::uint64_t>(i) << index_shift(r.level));
            if (r.level < 3 && (d & kValid) && (d & kTableOrPage)) {
                on_table(d & kAddrMask);
                stack.push_back({d & kAddrMask, va, r.level + 1});
            } else {
                on_leaf(va, at, d, r.level);
            }
        }
    }
}

}   // namespace mm
}   // namespace vrdmasim
