// The ARMv8-A stage-1 translation table format, 4 KiB granule: descriptor
// bits and VA indexing. One home for the format both sides of the MMU use:
// the OS writes page tables in it (models/os, models/smmu/page_table_writer)
// and the SMMU walks them (models/smmu/translation).
#pragma once

#include <cstdint>

namespace vrdmasim {

// AArch64 stage 1, 4 KiB granule (ARM ARM D5; docs/references.md).
namespace aarch64 {
constexpr std::uint64_t kValid = 1ull << 0;
constexpr std::uint64_t kTableOrPage = 1ull << 1;   // with kValid: table (L0-L2) / page (L3); clear: block (L1-L2)
constexpr unsigned kAttrIndxShift = 2;   // [4:2] index into MAIR
constexpr std::uint64_t kNs = 1ull << 5;
constexpr std::uint64_t kApUser = 1ull << 6;   // AP[1]: EL0 access
constexpr std::uint64_t kApReadOnly = 1ull << 7;   // AP[2]: read-only
constexpr unsigned kShShift = 8;   // [9:8]
constexpr std::uint64_t kAf = 1ull << 10;   // access flag
constexpr std::uint64_t kNg = 1ull << 11;   // not global
constexpr std::uint64_t kPxn = 1ull << 53;
constexpr std::uint64_t kUxn = 1ull << 54;
constexpr std::uint64_t kAddrMask = 0x0000fffffffff000ull;   // [47:12]
constexpr std::uint64_t kPageSize = 4096;
constexpr std::uint64_t kBlockSize = 2ull << 20;   // level-2 block
// Bits of the VA that index level `l` (0..3): [47:39], [38:30], [29:21], [20:12].
inline unsigned index_shift(int level) { return 39u - 9u * static_cast<unsigned>(level); }
inline unsigned index_of(std::uint64_t va, int level) { return (va >> index_shift(level)) & 0x1ff; }
// First level walked for a given T0SZ (16..39 with a 4 KiB granule).
inline int start_level(unsigned t0sz) {
    const unsigned bits = 64 - t0sz;
    return bits > 39 ? 0 : bits > 30 ? 1 : bits > 21 ? 2 : 3;
}
}   // namespace aarch64

}   // namespace vrdmasim
