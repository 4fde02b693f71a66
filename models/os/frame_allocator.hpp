// FrameAllocator: the physical page allocator of one node's kernel, a buddy
// allocator over a range of DRAM frames with 4 KiB (order 0) to 2 MiB (order
// 9) blocks, as Linux's. Fragmentation decides whether a 2 MiB frame can be
// had: freed 4 KiB frames coalesce with their buddies only when both halves
// are free. Pure bookkeeping: no simulated time, no memory contents.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace vrdmasim {

class FrameAllocator {
public:
    static constexpr std::uint64_t kPage = 4096;
    static constexpr unsigned kMaxOrder = 9;   // 2 MiB

    // Manages [base, base + size); both multiples of 2 MiB (std::invalid_argument otherwise).
    FrameAllocator(std::uint64_t base, std::uint64_t size);

    // A free block of 2^order pages, aligned to its size; the lowest address
    // among the free blocks of the smallest sufficient order (deterministic).
    // Empty when no block of that order can be made.
    std::optional<std::uint64_t> alloc(unsigned order);
    // Give back a block obtained from alloc with the same order. Freeing
    // something not allocated, or with the wrong order, is std::logic_error.
    void free(std::uint64_t pa, unsigned order);
    // Split an allocated 2^order block into allocated 2^(order-1) halves
    // (a huge page split into smaller ones keeps its frames).
    void split(std::uint64_t pa, unsigned order);

    bool contains(std::uint64_t pa) const { return pa >= base_ && pa < base_ + size_; }
    // Whether the frame holding `pa` lies in an allocated block (false for a
    // free frame, or one outside the managed range).
    bool allocated(std::uint64_t pa) const;
    std::uint64_t free_pages() const { return free_pages_; }
    std::uint64_t total_pages() const { return size_ / kPage; }
    // Free blocks of exactly this order (for fragmentation statistics).
    std::uint64_t free_blocks(unsigned order) const;
    // Whether a 2^order allocation would succeed now.
    bool can_alloc(unsigned order) const;

private:
    std::uint64_t base_, size_, free_pages_ = 0;
    // Orders 0..8: sorted free block addresses. Order 9: the free 2 MiB
    // blocks as runs of consecutive blocks (sorted, never adjacent: a block
    // freed between two runs joins them), so a mostly free DRAM is a few
    // runs, not one entry per 2 MiB. For each allocated block, by its first
    // page's index, its order (to check frees). Memory grows with what is
    // allocated and how fragmented the free space is, not with the size
    // managed.
    struct Run {
        std::uint64_t first;   // address of the run's first block
        std::uint64_t blocks;   // consecutive free 2 MiB blocks from there
    };
    std::array<std::vector<std::uint64_t>, kMaxOrder> free_;   // kept sorted
    std::vector<Run> huge_;   // kept sorted
    std::uint64_t huge_blocks_ = 0;   // blocks in huge_
    std::unordered_map<std::uint64_t, std::int8_t> allocated_order_;
    bool free_empty(unsigned order) const { return order < kMaxOrder ? free_[order].empty() : huge_.empty(); }
    std::uint64_t take_huge();   // the lowest free 2 MiB block, removed
    void put_huge(std::uint64_t pa);   // a 2 MiB block becomes free
    int held(std::uint64_t page) const {
        auto it = allocated_order_.find(page);
        return it == allocated_order_.end() ? -1 : it->second;
    }
};

}   // namespace vrdmasim
