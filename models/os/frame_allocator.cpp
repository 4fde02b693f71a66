#include "models/os/frame_allocator.hpp"

#include "src/core/format.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vrdmasim {

namespace {

constexpr std::uint64_t kHuge = FrameAllocator::kPage << FrameAllocator::kMaxOrder;   // 2 MiB

void insert_sorted(std::vector<std::uint64_t>& v, std::uint64_t pa) {
    v.insert(std::lower_bound(v.begin(), v.end(), pa), pa);
}

// Removes `pa` if present; says whether it was.
bool erase_sorted(std::vector<std::uint64_t>& v, std::uint64_t pa) {
    auto it = std::lower_bound(v.begin(), v.end(), pa);
    if (it == v.end() || *it != pa) return false;
    v.erase(it);
    return true;
}

}   // namespace

FrameAllocator::FrameAllocator(std::uint64_t base, std::uint64_t size) : base_(base), size_(size) {
    if (size == 0 || base % kHuge != 0 || size % kHuge != 0 || base + size < base)
        throw std::invalid_argument("FrameAllocator: base " + hex(base) + " and size " + hex(size) +
                                    " must be non-zero multiples of 2 MiB (size > 0)");
    huge_.push_back(Run{base, size / kHuge});
    huge_blocks_ = size / kHuge;
    free_pages_ = size / kPage;
}

std::uint64_t FrameAllocator::take_huge() {
    Run& r = huge_.front();
    const std::uint64_t pa = r.first;
    r.first += kHuge;
    if (--r.blocks == 0) huge_.erase(huge_.begin());
    --huge_blocks_;
    return pa;
}

void FrameAllocator::put_huge(std::uint64_t pa) {
    // The first run starting above pa, and the one before it.
    auto next =
        std::upper_bound(huge_.begin(), huge_.end(), pa, [](std::uint64_t a, const Run& r) { return a < r.first; });
    const bool joins_next = next != huge_.end() && next->first == pa + kHuge;
    if (next != huge_.begin()) {
        Run& prev = *(next - 1);
        if (prev.first + prev.blocks * kHuge == pa) {   // extends the run below ...
            ++prev.blocks;
            if (joins_next) {   // ... and closes the gap to the one above
                prev.blocks += next->blocks;
                huge_.erase(next);
            }
            ++huge_blocks_;
            return;
        }
    }
    if (joins_next) {
        next->first = pa;
        ++next->blocks;
    } else {
        huge_.insert(next, Run{pa, 1});
    }
    ++huge_blocks_;
}

std::optional<std::uint64_t> FrameAllocator::alloc(unsigned order) {
    if (order > kMaxOrder)
        throw std::invalid_argument("FrameAllocator::alloc: order " + std::to_string(order) +
                                    " exceeds the largest order " + std::to_string(kMaxOrder));
    unsigned o = order;
    while (o <= kMaxOrder && free_empty(o)) ++o;
    if (o > kMaxOrder) return std::nullopt;

    // The lowest free block of the smallest sufficient order; split it down,
    // keeping the lower half and freeing the upper one at each step.
    std::uint64_t pa;
    if (o == kMaxOrder) {
        pa = take_huge();
    } else {
        pa = free_[o].front();
        free_[o].erase(free_[o].begin());
    }
    while (o > order) {
        --o;
        insert_sorted(free_[o], pa + (kPage << o));
    }
    allocated_order_[(pa - base_) / kPage] = static_cast<std::int8_t>(order);
    free_pages_ -= std::uint64_t{1} << order;
    return pa;
}

void FrameAllocator::free(std::uint64_t pa, unsigned order) {
    if (!contains(pa))
        throw std::logic_error("FrameAllocator::free: " + hex(pa) + " is outside the managed range [" + hex(base_) +
                               ", " + hex(base_ + size_) + ")");
    if (pa % kPage != 0) throw std::logic_error("FrameAllocator::free: " + hex(pa) + " is not page aligned");
    auto it = allocated_order_.find((pa - base_) / kPage);
    if (it == allocated_order_.end())
        throw std::logic_error("FrameAllocator::free: " + hex(pa) +
                               " is not the start of an allocated block (double free?)");
    if (order != static_cast<unsigned>(it->second))
        throw std::logic_error("FrameAllocator::free: " + hex(pa) + " was allocated with order " +
                               std::to_string(it->second) + ", freed with order " + std::to_string(order));
    allocated_order_.erase(it);
    free_pages_ += std::uint64_t{1} << order;

    // Coalesce with the buddy while it is free as a whole block of the same order.
    std::uint64_t off = pa - base_;
    unsigned o = order;
    while (o < kMaxOrder) {
        const std::uint64_t buddy = off ^ (kPage << o);
        if (!erase_sorted(free_[o], base_ + buddy)) break;
        off = std::min(off, buddy);
        ++o;
    }
    if (o == kMaxOrder) put_huge(base_ + off);
    else insert_sorted(free_[o], base_ + off);
}

void FrameAllocator::split(std::uint64_t pa, unsigned order) {
    if (!contains(pa) || pa % kPage != 0)
        throw std::logic_error("FrameAllocator::split: " + hex(pa) + " is not a managed page address");
    if (order == 0 || order > kMaxOrder)
        throw std::logic_error("FrameAllocator::split: order " + std::to_string(order) +
                               " cannot be split (orders 1.." + std::to_string(kMaxOrder) + ")");
    const std::uint64_t page = (pa - base_) / kPage;
    if (held(page) != static_cast<int>(order))
        throw std::logic_error("FrameAllocator::split: " + hex(pa) + " is not an allocated block of order " +
                               std::to_string(order));
    const auto half = static_cast<std::int8_t>(order - 1);
    allocated_order_[page] = half;
    allocated_order_[page + (std::uint64_t{1} << (order - 1))] = half;
}

std::uint64_t FrameAllocator::free_blocks(unsigned order) const {
    if (order == kMaxOrder) return huge_blocks_;
    return order < kMaxOrder ? free_[order].size() : 0;
}

bool FrameAllocator::can_alloc(unsigned order) const {
    for (unsigned o = order; o <= kMaxOrder; ++o)
        if (!free_empty(o)) return true;
    return false;
}

bool FrameAllocator::allocated(std::uint64_t pa) const {
    if (!contains(pa)) return false;
    // The block holding pa, if allocated, starts at pa aligned down to its
    // size and is recorded under that first page with its order.
    for (unsigned o = 0; o <= kMaxOrder; ++o) {
        const std::uint64_t block = (pa - base_) / (kPage << o) * (kPage << o);
        if (held(block / kPage) == static_cast<int>(o)) return true;
    }
    return false;
}

}   // namespace vrdmasim
