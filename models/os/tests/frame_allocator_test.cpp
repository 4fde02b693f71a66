// FrameAllocator: the buddy allocator of a node's kernel. Pure bookkeeping,
// so plain unit tests: exact addresses, free-list shapes, every error, and a
// long randomized sequence checked against a bitmap reference model that
// predicts the exact address of every allocation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/os/frame_allocator.hpp"

using vrdmasim::FrameAllocator;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
constexpr std::uint64_t kPage = FrameAllocator::kPage;
constexpr std::uint64_t kBase = 0x80000000;   // 2 GiB: not zero, so offsets and addresses differ

std::uint64_t block_bytes(unsigned order) { return kPage << order; }

// Free blocks of every order, 0..9.
std::vector<std::uint64_t> shape(const FrameAllocator& fa) {
    std::vector<std::uint64_t> v;
    for (unsigned o = 0; o <= FrameAllocator::kMaxOrder; ++o) v.push_back(fa.free_blocks(o));
    return v;
}

}   // namespace

TEST_CASE("frame allocator: construction checks 2 MiB alignment and starts with whole 2 MiB blocks", "[os][frames]") {
    FrameAllocator fa(kBase, 8 * MiB);
    CHECK(fa.total_pages() == 2048);
    CHECK(fa.free_pages() == 2048);
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 4});
    CHECK(fa.contains(kBase));
    CHECK(fa.contains(kBase + 8 * MiB - 1));
    CHECK_FALSE(fa.contains(kBase - 1));
    CHECK_FALSE(fa.contains(kBase + 8 * MiB));
    for (unsigned o = 0; o <= 9; ++o) CHECK(fa.can_alloc(o));

    CHECK_THROWS_AS(FrameAllocator(kBase + 4 * KiB, 8 * MiB), std::invalid_argument);
    CHECK_THROWS_AS(FrameAllocator(kBase, 8 * MiB + 4 * KiB), std::invalid_argument);
    CHECK_THROWS_AS(FrameAllocator(kBase, 1 * MiB), std::invalid_argument);
    CHECK_THROWS_AS(FrameAllocator(kBase, 0), std::invalid_argument);
    CHECK_NOTHROW(FrameAllocator(0, 2 * MiB));
}

TEST_CASE("frame allocator: a block of each order is aligned to its size and splits the rest down", "[os][frames]") {
    FrameAllocator fa(kBase, 8 * MiB);
    // One order-0 page from a fresh allocator: the first 2 MiB block is split
    // into free halves of orders 0..8, the other three blocks stay whole.
    CHECK(fa.alloc(0) == kBase);
    CHECK(shape(fa) == std::vector<std::uint64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 3});
    CHECK(fa.free_pages() == 2047);

    // Orders 1..9 in turn: each comes from the smallest free block that fits,
    // which the first split left exactly at kBase + block size.
    for (unsigned o = 1; o <= 8; ++o) {
        const auto pa = fa.alloc(o);
        REQUIRE(pa);
        CHECK(*pa == kBase + block_bytes(o));
        CHECK((*pa - kBase) % block_bytes(o) == 0);
    }
    // Block 0 now holds 1 + (2 + 4 + ... + 256) = 511 allocated pages; only
    // page 1 (page 0's buddy) is still free in it.
    CHECK(shape(fa) == std::vector<std::uint64_t>{1, 0, 0, 0, 0, 0, 0, 0, 0, 3});
    CHECK(fa.alloc(9) == kBase + 2 * MiB);
    CHECK(fa.alloc(9) == kBase + 4 * MiB);
    CHECK(fa.free_pages() == 2048 - 511 - 2 * 512);

    // Order 0 takes page 1 (smallest sufficient order) before splitting block 3.
    CHECK(fa.alloc(0) == kBase + kPage);
    CHECK(fa.alloc(0) == kBase + 6 * MiB);
    CHECK(fa.alloc(9) == std::nullopt);   // block 3 is split: no 2 MiB left
    CHECK_FALSE(fa.can_alloc(9));
    CHECK(fa.can_alloc(8));
}

TEST_CASE("frame allocator: lowest address first, smallest sufficient order first", "[os][frames]") {
    FrameAllocator fa(kBase, 4 * MiB);
    std::vector<std::uint64_t> p;
    for (int i = 0; i < 8; ++i) {
        const auto pa = fa.alloc(0);
        REQUIRE(pa);
        p.push_back(*pa);
    }
    for (int i = 0; i < 8; ++i) CHECK(p[i] == kBase + i * kPage);   // ascending, no gaps

    fa.free(p[2], 0);
    fa.free(p[3], 0);   // buddies: coalesce to an order-1 block at page 2
    fa.free(p[5], 0);   // its buddy (page 4) is held: stays order 0
    CHECK(fa.free_blocks(1) == 1);
    CHECK(fa.free_blocks(0) == 1);
    // Order 0: the order-0 block at page 5 beats the lower order-1 block at page 2.
    CHECK(fa.alloc(0) == kBase + 5 * kPage);
    // Now the order-1 block is the smallest sufficient one for order 0: split, low half first.
    CHECK(fa.alloc(0) == kBase + 2 * kPage);
    CHECK(fa.alloc(0) == kBase + 3 * kPage);
    // Freed low pages are reused before the untouched high ones.
    fa.free(p[1], 0);
    CHECK(fa.alloc(0) == kBase + 1 * kPage);
    CHECK(fa.alloc(0) == kBase + 8 * kPage);
}

TEST_CASE("frame allocator: only buddies coalesce, back up to whole 2 MiB blocks", "[os][frames]") {
    FrameAllocator fa(kBase, 2 * MiB);
    for (int i = 0; i < 4; ++i) REQUIRE(fa.alloc(0) == kBase + i * kPage);
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 1, 1, 1, 1, 1, 1, 1, 0});

    // Pages 1 and 2 are neighbours but not buddies: no coalescing.
    fa.free(kBase + 1 * kPage, 0);
    fa.free(kBase + 2 * kPage, 0);
    CHECK(shape(fa) == std::vector<std::uint64_t>{2, 0, 1, 1, 1, 1, 1, 1, 1, 0});
    // Page 0 + page 1 -> order 1 at page 0.
    fa.free(kBase, 0);
    CHECK(shape(fa) == std::vector<std::uint64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 0});
    // Page 3 + page 2 -> order 1, + pages 0-1 -> order 2, ... -> the whole 2 MiB.
    fa.free(kBase + 3 * kPage, 0);
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    CHECK(fa.free_pages() == 512);
    CHECK(fa.alloc(9) == kBase);
}

TEST_CASE("frame allocator: every page of a 2 MiB block freed in random order coalesces it again", "[os][frames]") {
    FrameAllocator fa(kBase, 8 * MiB);
    std::vector<std::uint64_t> pages;
    for (int i = 0; i < 512 * 4; ++i) {
        const auto pa = fa.alloc(0);
        REQUIRE(pa);
        pages.push_back(*pa);
    }
    CHECK(fa.free_pages() == 0);
    CHECK_FALSE(fa.can_alloc(0));
    CHECK(fa.alloc(0) == std::nullopt);
    std::mt19937_64 rng(42);
    std::shuffle(pages.begin(), pages.end(), rng);
    for (auto pa : pages) fa.free(pa, 0);
    CHECK(fa.free_pages() == 2048);
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 4});

    // Mixed orders too.
    std::vector<std::pair<std::uint64_t, unsigned>> held;
    for (unsigned round = 0; round < 3; ++round)
        for (unsigned o = 0; o <= 8; ++o) {
            const auto pa = fa.alloc(o);
            REQUIRE(pa);
            held.emplace_back(*pa, o);
        }
    std::shuffle(held.begin(), held.end(), rng);
    for (const auto& [pa, o] : held) fa.free(pa, o);
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 4});
}

TEST_CASE("frame allocator: one page held in every 2 MiB block makes 2 MiB impossible", "[os][frames]") {
    const std::uint64_t blocks = 32;   // 64 MiB
    FrameAllocator fa(kBase, blocks * 2 * MiB);
    std::vector<std::uint64_t> pages;
    while (auto pa = fa.alloc(0)) pages.push_back(*pa);
    REQUIRE(pages.size() == blocks * 512);
    // Keep page (37 * b) % 512 of block b, free everything else.
    std::vector<std::uint64_t> kept;
    for (auto pa : pages) {
        const std::uint64_t off = pa - kBase, b = off / (2 * MiB), page = (off % (2 * MiB)) / kPage;
        if (page == (37 * b) % 512) kept.push_back(pa);
        else fa.free(pa, 0);
    }
    REQUIRE(kept.size() == blocks);
    CHECK(fa.free_pages() == fa.total_pages() - blocks);   // 99.8 % free ...
    CHECK_FALSE(fa.can_alloc(9));   // ... but no 2 MiB block
    CHECK(fa.alloc(9) == std::nullopt);
    CHECK(fa.free_blocks(9) == 0);
    // Each block is one held page and one free block of every order 0..8.
    for (unsigned o = 0; o <= 8; ++o) CHECK(fa.free_blocks(o) == blocks);
    CHECK(fa.can_alloc(8));

    // Freeing one held page restores exactly that block.
    fa.free(kept[5], 0);
    CHECK(fa.can_alloc(9));
    CHECK(fa.free_blocks(9) == 1);
    CHECK(fa.alloc(9) == kBase + 5 * 2 * MiB);
    CHECK_FALSE(fa.can_alloc(9));
}

TEST_CASE("frame allocator: split turns an allocated block into allocated halves", "[os][frames]") {
    FrameAllocator fa(kBase, 4 * MiB);
    const auto huge = fa.alloc(9);
    REQUIRE(huge == kBase);
    const std::uint64_t free_before = fa.free_pages();
    fa.split(kBase, 9);
    CHECK(fa.free_pages() == free_before);   // the frames stay allocated
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    // The block is gone as an order-9 block: freeing or splitting it so is an error.
    CHECK_THROWS_AS(fa.free(kBase, 9), std::logic_error);
    CHECK_THROWS_AS(fa.split(kBase, 9), std::logic_error);

    // Split the low half down to pages; the high half stays order 8.
    fa.split(kBase, 8);
    for (unsigned o = 7; o >= 1; --o) fa.split(kBase, o);
    // Now: pages 0 and 1 (order 0), order o at kBase + block_bytes(o) for o = 1..7,
    // and order 8 at kBase + 1 MiB, all allocated.
    CHECK(fa.free_pages() == free_before);
    fa.free(kBase + kPage, 0);
    CHECK(fa.free_blocks(0) == 1);
    CHECK_THROWS_AS(fa.free(kBase + 1 * MiB, 7), std::logic_error);   // it is an order-8 block
    fa.free(kBase + 1 * MiB, 8);
    for (unsigned o = 1; o <= 7; ++o) fa.free(kBase + block_bytes(o), o);
    CHECK(fa.free_blocks(9) == 1);   // not yet: page 0 still held
    fa.free(kBase, 0);
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
    CHECK(fa.free_pages() == 1024);

    // Split all the way to 512 pages, free them one by one: a whole block again.
    REQUIRE(fa.alloc(9) == kBase);
    std::vector<std::pair<std::uint64_t, unsigned>> blocks{{kBase, 9}};
    for (unsigned o = 9; o >= 1; --o) {
        std::vector<std::pair<std::uint64_t, unsigned>> next;
        for (const auto& [pa, ord] : blocks) {
            fa.split(pa, ord);
            next.emplace_back(pa, ord - 1);
            next.emplace_back(pa + block_bytes(ord - 1), ord - 1);
        }
        blocks = std::move(next);
    }
    REQUIRE(blocks.size() == 512);
    for (std::size_t i = 0; i + 1 < blocks.size(); ++i) fa.free(blocks[i].first, 0);
    CHECK(fa.free_blocks(9) == 1);
    fa.free(blocks.back().first, 0);
    CHECK(fa.free_blocks(9) == 2);
}

TEST_CASE("frame allocator: split refuses what is not an allocated block of that order", "[os][frames]") {
    FrameAllocator fa(kBase, 4 * MiB);
    const auto pa = fa.alloc(4);
    REQUIRE(pa == kBase);
    CHECK_THROWS_AS(fa.split(kBase, 5), std::logic_error);   // wrong order
    CHECK_THROWS_AS(fa.split(kBase, 3), std::logic_error);   // wrong order
    CHECK_THROWS_AS(fa.split(kBase + block_bytes(4), 4), std::logic_error);   // free block
    CHECK_THROWS_AS(fa.split(kBase + kPage, 4), std::logic_error);   // inside the block
    CHECK_THROWS_AS(fa.split(kBase + 1, 4), std::logic_error);   // unaligned
    CHECK_THROWS_AS(fa.split(kBase + 4 * MiB, 4), std::logic_error);   // foreign
    CHECK_THROWS_AS(fa.split(kBase - 2 * MiB, 4), std::logic_error);   // foreign
    const auto page = fa.alloc(0);
    REQUIRE(page);
    CHECK_THROWS_AS(fa.split(*page, 0), std::logic_error);   // order 0 has no halves
    CHECK_THROWS_AS(fa.split(kBase, 10), std::logic_error);
    // Nothing changed: the order-4 block still frees as one.
    fa.free(kBase, 4);
    fa.free(*page, 0);
    CHECK(fa.free_blocks(9) == 2);
}

TEST_CASE("frame allocator: bad frees are logic errors and change nothing", "[os][frames]") {
    FrameAllocator fa(kBase, 4 * MiB);
    const auto a = fa.alloc(2);
    const auto b = fa.alloc(0);
    REQUIRE(a == kBase);
    REQUIRE(b == kBase + 4 * kPage);
    const auto before = shape(fa);
    const auto free_before = fa.free_pages();

    CHECK_THROWS_AS(fa.free(kBase, 1), std::logic_error);   // wrong order (smaller)
    CHECK_THROWS_AS(fa.free(kBase, 3), std::logic_error);   // wrong order (larger)
    CHECK_THROWS_AS(fa.free(kBase, 12), std::logic_error);   // no such order
    CHECK_THROWS_AS(fa.free(kBase + kPage, 0), std::logic_error);   // inside a block
    CHECK_THROWS_AS(fa.free(kBase + 5 * kPage, 0), std::logic_error);   // never allocated
    CHECK_THROWS_AS(fa.free(kBase + 2 * MiB, 9), std::logic_error);   // free block
    CHECK_THROWS_AS(fa.free(kBase + 4 * kPage + 8, 0), std::logic_error);   // unaligned
    CHECK_THROWS_AS(fa.free(kBase - kPage, 0), std::logic_error);   // foreign, below
    CHECK_THROWS_AS(fa.free(kBase + 4 * MiB, 0), std::logic_error);   // foreign, above
    CHECK_THROWS_AS(fa.free(0, 0), std::logic_error);   // foreign
    CHECK(shape(fa) == before);
    CHECK(fa.free_pages() == free_before);

    fa.free(*b, 0);
    CHECK_THROWS_AS(fa.free(*b, 0), std::logic_error);   // double free
    fa.free(*a, 2);
    CHECK_THROWS_AS(fa.free(*a, 2), std::logic_error);   // double free after coalescing
    CHECK(shape(fa) == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
    CHECK(fa.free_pages() == 1024);

    CHECK_THROWS_AS(fa.alloc(10), std::invalid_argument);   // beyond 2 MiB
    CHECK_FALSE(fa.can_alloc(10));
    CHECK(fa.free_blocks(10) == 0);
}

TEST_CASE("frame allocator: randomized alloc/free/split against a bitmap reference", "[os][frames]") {
    constexpr std::uint64_t kSize = 16 * MiB;   // 4096 pages, 8 blocks
    constexpr std::uint64_t kPages = kSize / kPage;
    FrameAllocator fa(kBase, kSize);

    std::vector<bool> used(kPages, false);   // the reference: page in use
    std::uint64_t used_pages = 0;
    struct Held {
        std::uint64_t page;
        unsigned order;
    };
    std::vector<Held> held;

    auto region_free = [&](std::uint64_t first, unsigned order) {
        for (std::uint64_t p = first; p < first + (std::uint64_t{1} << order); ++p)
            if (used[p]) return false;
        return true;
    };
    // A buddy allocator that coalesces eagerly has a free block of order o at
    // page p exactly when the aligned 2^o region at p is free and the aligned
    // region of its parent is not (or o is the top order).
    auto is_free_block = [&](std::uint64_t p, unsigned o) {
        if (!region_free(p, o)) return false;
        if (o == FrameAllocator::kMaxOrder) return true;
        return !region_free(p & ~((std::uint64_t{2} << o) - 1), o + 1);
    };
    auto expected_alloc = [&](unsigned order) -> std::optional<std::uint64_t> {
        for (unsigned o = order; o <= FrameAllocator::kMaxOrder; ++o)
            for (std::uint64_t p = 0; p < kPages; p += std::uint64_t{1} << o)
                if (is_free_block(p, o)) return p;
        return std::nullopt;
    };
    auto expected_blocks = [&](unsigned o) {
        std::uint64_t n = 0;
        for (std::uint64_t p = 0; p < kPages; p += std::uint64_t{1} << o) n += is_free_block(p, o);
        return n;
    };
    auto mark = [&](std::uint64_t page, unsigned order, bool v) {
        for (std::uint64_t p = page; p < page + (std::uint64_t{1} << order); ++p) {
            REQUIRE(used[p] != v);   // no overlap on alloc, no hole on free
            used[p] = v;
        }
        used_pages = v ? used_pages + (std::uint64_t{1} << order) : used_pages - (std::uint64_t{1} << order);
    };

    std::mt19937_64 rng(20240611);
    std::uint64_t allocs = 0, failures = 0, frees = 0, splits = 0;
    for (int step = 0; step < 6000; ++step) {
        const unsigned r = static_cast<unsigned>(rng() % 100);
        if (r < 55 || held.empty()) {
            // Orders skewed small, with some large ones to meet fragmentation.
            static const unsigned orders[] = {0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 8, 9};
            const unsigned order = orders[rng() % (sizeof orders / sizeof orders[0])];
            const auto want = expected_alloc(order);
            REQUIRE(fa.can_alloc(order) == want.has_value());
            const auto got = fa.alloc(order);
            REQUIRE(got.has_value() == want.has_value());
            if (!got) {
                ++failures;
                continue;
            }
            REQUIRE(*got == kBase + *want * kPage);
            REQUIRE((*got - kBase) % block_bytes(order) == 0);
            const std::uint64_t page = (*got - kBase) / kPage;
            mark(page, order, true);
            held.push_back({page, order});
            ++allocs;
        } else if (r < 92) {
            const std::size_t i = rng() % held.size();
            const Held h = held[i];
            held[i] = held.back();
            held.pop_back();
            fa.free(kBase + h.page * kPage, h.order);
            mark(h.page, h.order, false);
            ++frees;
        } else {
            const std::size_t i = rng() % held.size();
            if (held[i].order == 0) continue;
            const Held h = held[i];
            fa.split(kBase + h.page * kPage, h.order);
            held[i] = {h.page, h.order - 1};
            held.push_back({h.page + (std::uint64_t{1} << (h.order - 1)), h.order - 1});
            ++splits;
        }
        REQUIRE(fa.free_pages() == kPages - used_pages);
        if (step % 50 == 0)
            for (unsigned o = 0; o <= FrameAllocator::kMaxOrder; ++o) REQUIRE(fa.free_blocks(o) == expected_blocks(o));
    }
    // The sequence exercised every path.
    CHECK(allocs > 1000);
    CHECK(frees > 1000);
    CHECK(splits > 100);
    CHECK(failures > 10);

    // Give everything back: the allocator is whole again.
    for (const auto& h : held) fa.free(kBase + h.page * kPage, h.order);
    CHECK(fa.free_pages() == kPages);
    CHECK(fa.free_blocks(9) == 8);
}

TEST_CASE("frame allocator: allocated() tells every frame of an allocated block from a free one", "[os][frames]") {
    FrameAllocator fa(kBase, 4 * (2ull << 20));
    const auto huge = fa.alloc(9);
    const auto page = fa.alloc(0);
    REQUIRE(huge);
    REQUIRE(page);
    CHECK(fa.allocated(*huge));
    CHECK(fa.allocated(*huge + 511 * kPage + 17));   // any byte of any frame of the block
    CHECK(fa.allocated(*page));
    CHECK_FALSE(fa.allocated(*page + kPage));   // its buddy: free
    CHECK_FALSE(fa.allocated(kBase - kPage));   // outside the range
    fa.split(*huge, 9);   // its halves stay allocated
    CHECK(fa.allocated(*huge + 300 * kPage));
    fa.free(*page, 0);
    CHECK_FALSE(fa.allocated(*page));
}

TEST_CASE("frame allocator: 2 MiB blocks freed in any order come back lowest first", "[os][frames]") {
    // The free 2 MiB blocks are kept as runs of consecutive blocks: freeing
    // them in a random order joins, extends and splits runs; the count and
    // the order of allocation must not depend on that.
    constexpr std::uint64_t kBlocks = 64;
    FrameAllocator fa(kBase, kBlocks * 2 * MiB);
    std::vector<std::uint64_t> blocks;
    while (auto pa = fa.alloc(9)) blocks.push_back(*pa);
    REQUIRE(blocks.size() == kBlocks);
    for (std::uint64_t i = 0; i < kBlocks; ++i) CHECK(blocks[i] == kBase + i * 2 * MiB);
    CHECK(fa.free_blocks(9) == 0);

    std::mt19937_64 rng(7);
    for (int round = 0; round < 4; ++round) {
        std::vector<std::uint64_t> order = blocks;
        std::shuffle(order.begin(), order.end(), rng);
        const std::size_t keep = static_cast<std::size_t>(round) * 5;   // some stay allocated
        std::vector<std::uint64_t> freed(order.begin() + keep, order.end());
        for (std::size_t i = 0; i < freed.size(); ++i) {
            fa.free(freed[i], 9);
            CHECK(fa.free_blocks(9) == i + 1);
        }
        std::sort(freed.begin(), freed.end());
        for (std::uint64_t pa : freed) CHECK(fa.alloc(9) == pa);
        CHECK(fa.alloc(9) == std::nullopt);
        for (std::size_t i = 0; i < keep; ++i) fa.free(order[i], 9);
        for (std::size_t i = 0; i < keep; ++i) REQUIRE(fa.alloc(9));
    }
    // A page out of the first run's lowest block; freed, the block rejoins the run.
    for (std::uint64_t pa : blocks) fa.free(pa, 9);
    CHECK(fa.free_blocks(9) == kBlocks);
    const auto page = fa.alloc(0);
    REQUIRE(page == kBase);
    CHECK(fa.free_blocks(9) == kBlocks - 1);
    fa.free(*page, 0);
    CHECK(fa.free_blocks(9) == kBlocks);
    for (std::uint64_t i = 0; i < kBlocks; ++i) CHECK(fa.alloc(9) == kBase + i * 2 * MiB);
}
