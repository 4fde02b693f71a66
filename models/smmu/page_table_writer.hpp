// Builds ARMv8 stage-1 page tables (4 KiB granule) in simulated memory, as an
// operating system would: table, block (2 MiB) and page descriptors written
// as 8-byte little-endian words. Untimed: used at start-up (identity maps for
// physical-address runs), by tests, and by the OS model until it has its own.
#pragma once

#include <cstdint>
#include <functional>

#include <tlm>

#include "models/common/aarch64_descriptors.hpp"

namespace vrdmasim {

// Attributes of a leaf descriptor.
struct PageAttrs {
    bool write = true;   // AP[2] clear
    bool user = true;   // AP[1] set
    bool af = true;   // access flag set
    bool global = false;   // nG clear
    unsigned attr_index = 0;   // MAIR index
};

class PageTableWriter {
public:
    using ReadFn = std::function<std::uint64_t(std::uint64_t pa)>;
    using WriteFn = std::function<void(std::uint64_t pa, std::uint64_t value)>;
    // Returns the physical address of a fresh, zeroed, 4 KiB-aligned table.
    using AllocFn = std::function<std::uint64_t()>;

    using Attrs = PageAttrs;

    PageTableWriter(ReadFn read, WriteFn write, AllocFn alloc, unsigned t0sz = 16);
    // Over a target's debug transport (e.g. a Dram's or a bus's socket).
    static PageTableWriter over(tlm::tlm_fw_transport_if<>& mem, AllocFn alloc, unsigned t0sz = 16);

    std::uint64_t root() const { return root_; }
    unsigned t0sz() const { return t0sz_; }

    // Map one 4 KiB page / one 2 MiB block (va and pa aligned). Replaces
    // whatever maps that address now; a block over a table drops the table's
    // mappings, a page inside a block is a programming error (std::logic_error:
    // split the block first with unmap).
    void map_page(std::uint64_t va, std::uint64_t pa, const Attrs& a = Attrs{});
    void map_block(std::uint64_t va, std::uint64_t pa, const Attrs& a = Attrs{});
    // Map [va, va+len) to [pa, pa+len): 2 MiB blocks where both are aligned
    // and `blocks` is set, pages elsewhere.
    void map_range(std::uint64_t va, std::uint64_t pa, std::uint64_t len, const Attrs& a, bool blocks);
    // Clear the leaf (page or block) that maps va; false if none.
    bool unmap(std::uint64_t va);
    // The leaf descriptor mapping va and its level (1 or 2 block, 3 page), or 0
    // (also for a VA beyond T0SZ).
    std::uint64_t leaf(std::uint64_t va, int* level = nullptr) const;
    // Address of that leaf descriptor (for tests that flip bits), or 0.
    std::uint64_t leaf_address(std::uint64_t va) const;

    static std::uint64_t leaf_bits(const Attrs& a);

private:
    // Address of the level-`level` descriptor for va, creating tables above it.
    std::uint64_t slot(std::uint64_t va, int level, bool create);
    ReadFn read_;
    WriteFn write_;
    AllocFn alloc_;
    unsigned t0sz_;
    std::uint64_t root_;
};

}   // namespace vrdmasim
