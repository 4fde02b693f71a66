// The SMMU's translation machinery, without registers or sockets: the
// PageTableWriter that builds tables, the page-table walker (checked against an
// independent reference walker on randomized tables), the walk cache and the
// TLB. No simulation runs: times are plain sc_time values.
//
// Memory is a sparse map of 8-byte words. Tables come from an allocator that
// hands out 4 KiB pages from 0x80000000 upwards, so the root of a fresh
// writer is 0x80000000 and the next tables follow in the order they are made.
// Unless a test says otherwise each descriptor read takes 50 ns.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/smmu/page_table_writer.hpp"
#include "models/smmu/translation.hpp"

using namespace vrdmasim;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

namespace {

constexpr std::uint64_t KiB4 = 4096;
constexpr std::uint64_t MiB2 = 2ull << 20;
constexpr std::uint64_t GiB1 = 1ull << 30;
constexpr std::uint64_t kTableBase = 0x80000000ull;
// Default Attrs leaf bits: SH=3 (0x300), AP[1] user (0x40), AF (0x400), nG (0x800).
constexpr std::uint64_t kDefaultLeafBits = 0xf40;

struct Memory {
    std::unordered_map<std::uint64_t, std::uint64_t> words;
    std::set<std::uint64_t> bad;   // reads of these return an error
    std::uint64_t next = kTableBase;
    unsigned allocs = 0;
    sc_time latency = sc_time(50, SC_NS);
    bool address_dependent_latency = false;
    std::vector<std::uint64_t> reads;   // descriptor addresses the walker read, in order
    std::vector<sc_time> issued;   // when each read was issued

    std::uint64_t get(std::uint64_t pa) const {
        auto it = words.find(pa);
        return it == words.end() ? 0 : it->second;
    }
    sc_time latency_of(std::uint64_t pa) const {
        return address_dependent_latency ? sc_time(10 + static_cast<double>((pa >> 3) % 7), SC_NS) : latency;
    }
    PageTableWriter writer(unsigned t0sz = 16) {
        return PageTableWriter([this](std::uint64_t pa) { return get(pa); },
                               [this](std::uint64_t pa, std::uint64_t v) { words[pa] = v; },
                               [this] {
                                   ++allocs;
                                   const std::uint64_t a = next;
                                   next += KiB4;
                                   return a;
                               },
                               t0sz);
    }
    PageTableWalker::ReadFn read_fn() {
        return [this](std::uint64_t pa, std::uint64_t& v, sc_time at, bool& ok) {
            reads.push_back(pa);
            issued.push_back(at);
            if (bad.count(pa)) {
                ok = false;
                return at + latency_of(pa);
            }
            v = get(pa);
            return at + latency_of(pa);
        };
    }
    void clear_log() {
        reads.clear();
        issued.clear();
    }
};

WalkRequest request(std::uint64_t va, std::uint64_t ttbr, unsigned t0sz = 16, bool write = false) {
    WalkRequest r;
    r.va = va;
    r.ttbr = ttbr;
    r.t0sz = t0sz;
    r.write = write;
    return r;
}

std::uint64_t idx(std::uint64_t va, int level) { return (va >> (39 - 9 * level)) & 511; }

Translation entry(std::uint64_t va_base, std::uint64_t pa_base, std::uint64_t size, unsigned cb, std::uint16_t asid,
                  bool global = false) {
    Translation t;
    t.va_base = va_base;
    t.pa_base = pa_base;
    t.size = size;
    t.cb = cb;
    t.asid = asid;
    t.global = global;
    t.writable = true;
    return t;
}

// A target with only a debug transport, over a word map, for PageTableWriter::over.
struct DebugMemory : tlm::tlm_fw_transport_if<> {
    std::unordered_map<std::uint64_t, std::uint64_t> words;
    unsigned calls = 0;
    void b_transport(tlm::tlm_generic_payload& gp, sc_time&) override {
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_time&) override {
        return tlm::TLM_COMPLETED;
    }
    bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(tlm::tlm_generic_payload& gp) override {
        ++calls;
        if (gp.get_data_length() != 8 || (gp.get_address() & 7)) return 0;
        std::uint64_t* p = reinterpret_cast<std::uint64_t*>(gp.get_data_ptr());
        if (gp.is_write()) words[gp.get_address()] = *p;
        else *p = words.count(gp.get_address()) ? words[gp.get_address()] : 0;
        return 8;
    }
};

}   // namespace

// ====================================================================== PageTableWriter

TEST_CASE("PageTableWriter: a page creates one table per level and an exact page descriptor", "[writer]") {
    Memory m;
    auto w = m.writer();
    REQUIRE(w.root() == kTableBase);
    REQUIRE(w.t0sz() == 16);
    REQUIRE(m.allocs == 1);
    const std::uint64_t va = 0x123456789000ull, pa = 0x87654000ull;
    w.map_page(va, pa);
    REQUIRE(m.allocs == 4);
    REQUIRE(m.get(kTableBase + 8 * idx(va, 0)) == (kTableBase + 0x1000) + 3);
    REQUIRE(m.get(kTableBase + 0x1000 + 8 * idx(va, 1)) == (kTableBase + 0x2000) + 3);
    REQUIRE(m.get(kTableBase + 0x2000 + 8 * idx(va, 2)) == (kTableBase + 0x3000) + 3);
    REQUIRE(m.get(kTableBase + 0x3000 + 8 * idx(va, 3)) == (pa | kDefaultLeafBits | 3));
    REQUIRE(m.words.size() == 4);
    int level = -1;
    REQUIRE(w.leaf(va + 0xabc, &level) == (pa | kDefaultLeafBits | 3));
    REQUIRE(level == 3);
    REQUIRE(w.leaf_address(va) == kTableBase + 0x3000 + 8 * idx(va, 3));
    // A neighbour page shares all tables; one in the next 2 MiB needs a new level-3 table.
    w.map_page(va + KiB4, pa + 0x10000);
    REQUIRE(m.allocs == 4);
    w.map_page(va + MiB2, pa);
    REQUIRE(m.allocs == 5);
    REQUIRE(w.leaf(va + 2 * KiB4) == 0);
    REQUIRE(w.leaf_address(va + 2 * KiB4) == 0);
}

TEST_CASE("PageTableWriter: leaf bits follow the attributes", "[writer]") {
    PageTableWriter::Attrs a;
    REQUIRE(PageTableWriter::leaf_bits(a) == kDefaultLeafBits);
    a.write = false;
    a.user = false;
    a.af = false;
    a.global = true;
    a.attr_index = 5;
    REQUIRE(PageTableWriter::leaf_bits(a) == (0x300 | aarch64::kApReadOnly | (5u << 2)));
    a.attr_index = 9;   // only 3 bits
    REQUIRE(PageTableWriter::leaf_bits(a) == (0x300 | aarch64::kApReadOnly | (1u << 2)));
}

TEST_CASE("PageTableWriter: blocks, replacement, unmap and errors", "[writer]") {
    Memory m;
    auto w = m.writer();
    const std::uint64_t va = 0x40000000ull;   // 1 GiB, 2 MiB aligned
    PageTableWriter::Attrs ro;
    ro.write = false;
    w.map_block(va, 0x200000000ull, ro);
    REQUIRE(m.allocs == 3);   // root, level 1, level 2
    int level = -1;
    const std::uint64_t block = (0x200000000ull | kDefaultLeafBits | aarch64::kApReadOnly | 1);
    REQUIRE(w.leaf(va + 0x1ff000, &level) == block);
    REQUIRE(level == 2);
    REQUIRE(w.leaf_address(va + 0x12345) == kTableBase + 0x2000 + 8 * idx(va, 2));
    // A page inside a block is a programming error.
    REQUIRE_THROWS_AS(w.map_page(va + KiB4, 0x1000), std::logic_error);
    // Unaligned addresses.
    REQUIRE_THROWS_AS(w.map_page(va + 0x800, 0x1000), std::logic_error);
    REQUIRE_THROWS_AS(w.map_page(va, 0x1800), std::logic_error);
    REQUIRE_THROWS_AS(w.map_block(va + KiB4, 0), std::logic_error);
    REQUIRE_THROWS_AS(w.map_block(va, KiB4), std::logic_error);
    // Beyond T0SZ.
    REQUIRE_THROWS_AS(w.map_page(1ull << 48, 0), std::logic_error);
    REQUIRE(w.leaf(1ull << 48) == 0);
    // Unmap the block, then pages can go there.
    REQUIRE(w.unmap(va + 0x5000));
    REQUIRE_FALSE(w.unmap(va + 0x5000));
    REQUIRE(w.leaf(va) == 0);
    w.map_page(va + KiB4, 0x7000);
    REQUIRE(m.allocs == 4);
    REQUIRE(w.leaf(va + KiB4, &level) == (0x7000 | kDefaultLeafBits | 3));
    REQUIRE(level == 3);
    // A block over that table drops its pages.
    w.map_block(va, 0x400000);
    REQUIRE(w.leaf(va + KiB4, &level) == (0x400000 | kDefaultLeafBits | 1));
    REQUIRE(level == 2);
    // Remapping a page replaces it.
    w.map_page(0x1000, 0x5000);
    w.map_page(0x1000, 0x6000);
    REQUIRE(w.leaf(0x1000) == (0x6000 | kDefaultLeafBits | 3));
    REQUIRE(w.unmap(0x1000));
    REQUIRE(w.leaf(0x1000) == 0);
    REQUIRE_FALSE(w.unmap(0x1000));
    REQUIRE_FALSE(w.unmap(0x7f0000000000ull));   // no tables there at all
    REQUIRE_THROWS_AS(m.writer(15), std::logic_error);
    REQUIRE_THROWS_AS(m.writer(40), std::logic_error);
}

TEST_CASE("PageTableWriter: leaf reports the level of a hand-written level-1 block", "[writer]") {
    Memory m;
    auto w = m.writer();
    w.map_page(0x1000, 0x1000);   // creates the level-1 table at kTableBase + 0x1000
    m.words[kTableBase + 0x1000 + 8 * 3] = 0xc0000000ull | kDefaultLeafBits | 1;   // VA 3 GiB
    int level = -1;
    REQUIRE(w.leaf(3 * GiB1 + 0x12345678, &level) == (0xc0000000ull | kDefaultLeafBits | 1));
    REQUIRE(level == 1);
    REQUIRE(w.leaf_address(3 * GiB1) == kTableBase + 0x1000 + 24);
}

TEST_CASE("PageTableWriter: map_range uses blocks only where both addresses are aligned", "[writer]") {
    Memory m;
    auto w = m.writer();
    // [1 MiB, 7 MiB): pages up to 2 MiB, blocks at 2 and 4 MiB, pages from 6 MiB.
    w.map_range(0x100000, 0x40100000, 6ull << 20, PageTableWriter::Attrs{}, true);
    int level = -1;
    for (std::uint64_t va = 0x100000; va < 0x700000; va += KiB4) {
        const std::uint64_t d = w.leaf(va, &level);
        const bool in_block = va >= 0x200000 && va < 0x600000;
        REQUIRE(level == (in_block ? 2 : 3));
        if (in_block) REQUIRE(d == ((0x40000000 + (va & ~(MiB2 - 1))) | kDefaultLeafBits | 1));
        else REQUIRE(d == ((0x40000000 + va) | kDefaultLeafBits | 3));
    }
    REQUIRE(w.leaf(0xff000) == 0);
    REQUIRE(w.leaf(0x700000) == 0);
    // Misaligned PA: pages only.
    Memory m2;
    auto w2 = m2.writer();
    w2.map_range(0, 0x1000, 4ull << 20, PageTableWriter::Attrs{}, true);
    w2.leaf(0x200000, &level);
    REQUIRE(level == 3);
    // blocks = false: pages only.
    Memory m3;
    auto w3 = m3.writer();
    w3.map_range(0, 0, 4ull << 20, PageTableWriter::Attrs{}, false);
    w3.leaf(0x200000, &level);
    REQUIRE(level == 3);
    REQUIRE(w3.leaf(0x3ff000) == (0x3ff000 | kDefaultLeafBits | 3));
}

TEST_CASE("PageTableWriter: smaller T0SZ starts at a lower level", "[writer]") {
    Memory m;
    auto w = m.writer(39);   // 25-bit input, start level 2
    w.map_page(0x1fff000, 0x5000);
    REQUIRE(m.allocs == 2);   // root (level 2) + one level-3 table
    REQUIRE(m.get(kTableBase + 8 * 15) == (kTableBase + 0x1000) + 3);
    REQUIRE(w.leaf(0x1fff000) == (0x5000 | kDefaultLeafBits | 3));
    REQUIRE_THROWS_AS(w.map_page(0x2000000, 0), std::logic_error);
    // Bit 30 would fall out of the level-2 index: beyond T0SZ is simply unmapped.
    REQUIRE(w.leaf(0x1fff000 | (1ull << 30)) == 0);
    REQUIRE(w.leaf_address(0x1fff000 | (1ull << 30)) == 0);
    REQUIRE_FALSE(w.unmap(0x1fff000 | (1ull << 30)));
    w.map_block(0x1e00000, 0x600000);
    int level = -1;
    REQUIRE(w.leaf(0x1e00000, &level) == (0x600000 | kDefaultLeafBits | 1));
    REQUIRE(level == 2);
}

TEST_CASE("PageTableWriter: over a target's debug transport", "[writer]") {
    DebugMemory mem;
    std::uint64_t next = 0x10000;
    auto w = PageTableWriter::over(mem, [&next] { return (next += KiB4) - KiB4; });
    REQUIRE(w.root() == 0x10000);
    w.map_page(0x5000, 0x9000);
    REQUIRE(mem.words.at(0x13000 + 8 * 5) == (0x9000 | kDefaultLeafBits | 3));
    REQUIRE(mem.calls > 0);
    REQUIRE(w.leaf(0x5000) == (0x9000 | kDefaultLeafBits | 3));
}

// ====================================================================== walker

TEST_CASE("Walker: a 4 KiB page at T0SZ=16 takes one read per level", "[walker]") {
    Memory m;
    auto w = m.writer();
    const std::uint64_t va = 0x123456789000ull, pa = 0x87654000ull;
    w.map_page(va, pa);
    WalkCache cache(16);
    PageTableWalker walker(m.read_fn(), cache);
    auto r = request(va + 0x321, w.root() | (7ull << 48));   // ASID bits in TTBR are not the table
    r.cb = 3;
    r.asid = 7;
    const sc_time start(1000, SC_NS);
    const WalkResult res = walker.walk(r, start);
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.level == 3);
    REQUIRE(res.reads == 4);
    REQUIRE(res.cache_hits == 0);
    REQUIRE(res.done == sc_time(1200, SC_NS));
    REQUIRE(res.t.va_base == va);
    REQUIRE(res.t.pa_base == pa);
    REQUIRE(res.t.size == KiB4);
    REQUIRE(res.t.cb == 3);
    REQUIRE(res.t.asid == 7);
    REQUIRE_FALSE(res.t.global);
    REQUIRE(res.t.writable);
    REQUIRE(res.t.user);
    REQUIRE(m.reads == std::vector<std::uint64_t>{kTableBase + 8 * idx(va, 0), kTableBase + 0x1000 + 8 * idx(va, 1),
                                                  kTableBase + 0x2000 + 8 * idx(va, 2),
                                                  kTableBase + 0x3000 + 8 * idx(va, 3)});
    REQUIRE(m.issued == std::vector<sc_time>{sc_time(1000, SC_NS), sc_time(1050, SC_NS), sc_time(1100, SC_NS),
                                             sc_time(1150, SC_NS)});
}

TEST_CASE("Walker: attributes of the leaf reach the translation", "[walker]") {
    Memory m;
    auto w = m.writer();
    PageTableWriter::Attrs a;
    a.write = false;
    a.user = false;
    a.global = true;
    w.map_page(0x5000, 0x9000, a);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    const WalkResult res = walker.walk(request(0x5000, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.t.global);
    REQUIRE_FALSE(res.t.writable);
    REQUIRE_FALSE(res.t.user);
    // Upper attribute bits (PXN, UXN, software bits) do not matter.
    m.words[w.leaf_address(0x5000)] |= aarch64::kPxn | aarch64::kUxn | (0xfull << 55);
    const WalkResult res2 = walker.walk(request(0x5000, w.root()), sc_time(0, SC_NS));
    REQUIRE(res2.fault == FaultType::None);
    REQUIRE(res2.t.pa_base == 0x9000);
}

TEST_CASE("Walker: a 2 MiB block takes 3 reads and covers 512 pages", "[walker][tlb]") {
    Memory m;
    auto w = m.writer();
    const std::uint64_t va = 0x7f0000200000ull, pa = 0x1c0000000ull;
    w.map_block(va, pa);
    w.map_page(va + MiB2, 0x3000);   // a page next to it for comparison
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    const WalkResult res = walker.walk(request(va + 0x12345, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.level == 2);
    REQUIRE(res.reads == 3);
    REQUIRE(res.done == sc_time(150, SC_NS));
    REQUIRE(res.t.va_base == va);
    REQUIRE(res.t.pa_base == pa);
    REQUIRE(res.t.size == MiB2);
    const WalkResult page = walker.walk(request(va + MiB2, w.root()), sc_time(0, SC_NS));
    REQUIRE(page.reads == 4);
    REQUIRE(page.t.size == KiB4);

    Tlb tlb(512, 4, TlbReplacement::Lru);
    tlb.insert(res.t);
    for (unsigned i = 0; i < 512; ++i) {
        const Translation* t = tlb.lookup(0, 0, va + i * KiB4 + 0x7);
        REQUIRE(t);
        REQUIRE(t->pa_base == pa);
        REQUIRE(t->size == MiB2);
    }
    REQUIRE(tlb.lookup(0, 0, va + MiB2) == nullptr);
    REQUIRE(tlb.lookup(0, 0, va - 1) == nullptr);
    REQUIRE(tlb.occupied() == 1);
}

TEST_CASE("Walker: a level-1 (1 GiB) block gives the 2 MiB slice containing the VA", "[walker]") {
    Memory m;
    auto w = m.writer();
    w.map_page(0x1000, 0x1000);   // level-1 table at kTableBase + 0x1000
    const std::uint64_t block_pa = 0x3c0000000ull;
    m.words[kTableBase + 0x1000 + 8 * 5] = block_pa | kDefaultLeafBits | 1;   // VA [5 GiB, 6 GiB)
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    const std::uint64_t va = 5 * GiB1 + 0x2345678;
    const WalkResult res = walker.walk(request(va, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.level == 1);
    REQUIRE(res.reads == 2);
    REQUIRE(res.t.size == MiB2);
    REQUIRE(res.t.va_base == 5 * GiB1 + 0x2200000);
    REQUIRE(res.t.pa_base == block_pa + 0x2200000);
    // Start level 1 (39-bit input): one read.
    Memory m2;
    auto w2 = m2.writer(25);
    m2.words[w2.root() + 8 * 2] = 0x40000000ull | kDefaultLeafBits | 1;
    PageTableWalker walker2(m2.read_fn(), cache);
    const WalkResult res2 = walker2.walk(request(2 * GiB1 + 0x3ffff000ull, w2.root(), 25), sc_time(0, SC_NS));
    REQUIRE(res2.fault == FaultType::None);
    REQUIRE(res2.reads == 1);
    REQUIRE(res2.level == 1);
    REQUIRE(res2.t.va_base == 2 * GiB1 + 0x3fe00000ull);
    REQUIRE(res2.t.pa_base == 0x7fe00000ull);
}

TEST_CASE("Walker: T0SZ limits 25, 39 and 48-bit inputs", "[walker]") {
    struct Case {
        unsigned t0sz;
        int start;
        unsigned page_reads;
    };
    for (const Case c :
         {Case{39, 2, 2}, Case{25, 1, 3}, Case{16, 0, 4}, Case{34, 2, 2}, Case{33, 1, 3}, Case{24, 0, 4}}) {
        CAPTURE(c.t0sz);
        Memory m;
        auto w = m.writer(c.t0sz);
        const std::uint64_t limit = 1ull << (64 - c.t0sz);
        const std::uint64_t last = limit - KiB4;
        w.map_page(last, 0x9000);
        w.map_page(0, 0xa000);
        WalkCache cache(0);
        PageTableWalker walker(m.read_fn(), cache);
        const WalkResult top = walker.walk(request(last + 0xfff, w.root(), c.t0sz), sc_time(10, SC_NS));
        REQUIRE(top.fault == FaultType::None);
        REQUIRE(top.reads == c.page_reads);
        REQUIRE(top.t.pa_base == 0x9000);
        REQUIRE(top.done == sc_time(10 + 50.0 * c.page_reads, SC_NS));
        REQUIRE(m.reads.front() == kTableBase + 8 * ((last >> (39 - 9 * c.start)) & 511));
        const WalkResult bottom = walker.walk(request(0, w.root(), c.t0sz), sc_time(10, SC_NS));
        REQUIRE(bottom.fault == FaultType::None);
        REQUIRE(bottom.t.pa_base == 0xa000);
        m.clear_log();
        for (std::uint64_t beyond : std::vector<std::uint64_t>{limit, limit + 0x1000, ~0ull, 1ull << 63}) {
            const WalkResult out = walker.walk(request(beyond, w.root(), c.t0sz), sc_time(10, SC_NS));
            REQUIRE(out.fault == FaultType::Translation);
            REQUIRE(out.level == c.start);
            REQUIRE(out.reads == 0);
            REQUIRE(out.done == sc_time(10, SC_NS));
        }
        REQUIRE(m.reads.empty());
    }
}

TEST_CASE("Walker: T0SZ outside 16..39 is treated as the nearest limit", "[walker]") {
    Memory m;
    auto w = m.writer(16);
    w.map_page(0xfffffffff000ull, 0x9000);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    REQUIRE(walker.walk(request(0xfffffffff000ull, w.root(), 0), sc_time(0, SC_NS)).reads == 4);
    const WalkResult out = walker.walk(request(1ull << 48, w.root(), 8), sc_time(0, SC_NS));
    REQUIRE(out.fault == FaultType::Translation);
    REQUIRE(out.reads == 0);
    Memory m2;
    auto w2 = m2.writer(39);
    w2.map_page(0x1000, 0x9000);
    PageTableWalker walker2(m2.read_fn(), cache);
    const WalkResult r2 = walker2.walk(request(0x1000, w2.root(), 45), sc_time(0, SC_NS));
    REQUIRE(r2.fault == FaultType::None);
    REQUIRE(r2.reads == 2);
    REQUIRE(walker2.walk(request(1ull << 25, w2.root(), 45), sc_time(0, SC_NS)).reads == 0);
}

TEST_CASE("Walker: translation faults at every level", "[walker][fault]") {
    Memory m;
    auto w = m.writer();
    const std::uint64_t va = 0x008040201000ull;   // indices 1, 1, 1, 1
    REQUIRE(idx(va, 0) == 1);
    REQUIRE(idx(va, 1) == 1);
    REQUIRE(idx(va, 2) == 1);
    REQUIRE(idx(va, 3) == 1);
    w.map_page(va, 0x9000);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    struct Case {
        std::uint64_t va;
        int level;
    };
    // Each VA differs from va in the index of one level: an empty slot there.
    for (const Case c : {Case{va + (1ull << 39), 0}, Case{va + (1ull << 30), 1}, Case{va + (1ull << 21), 2},
                         Case{va + (1ull << 12), 3}}) {
        CAPTURE(c.level);
        const WalkResult res = walker.walk(request(c.va, w.root()), sc_time(0, SC_NS));
        REQUIRE(res.fault == FaultType::Translation);
        REQUIRE(res.level == c.level);
        REQUIRE(res.reads == static_cast<unsigned>(c.level + 1));
        REQUIRE(res.done == sc_time(50.0 * (c.level + 1), SC_NS));
    }
    // An invalid descriptor with other bits set is still invalid (bit 0 clear),
    // as is bits[1:0] = 10.
    const std::uint64_t leaf = w.leaf_address(va);
    for (std::uint64_t d : {(0x9000ull | kDefaultLeafBits | 2), (0x9000ull | kDefaultLeafBits)}) {
        m.words[leaf] = d;
        const WalkResult res = walker.walk(request(va, w.root()), sc_time(0, SC_NS));
        REQUIRE(res.fault == FaultType::Translation);
        REQUIRE(res.level == 3);
        REQUIRE(res.reads == 4);
    }
    // A table descriptor with bit 0 clear at level 1.
    m.words[kTableBase + 0x1000 + 8] &= ~1ull;
    const WalkResult res = walker.walk(request(va, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::Translation);
    REQUIRE(res.level == 1);
    REQUIRE(res.reads == 2);
}

TEST_CASE("Walker: reserved encodings are translation faults", "[walker][fault]") {
    Memory m;
    auto w = m.writer();
    w.map_page(0x1000, 0x9000);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    // bits[1:0] = 01 at level 3.
    m.words[w.leaf_address(0x1000)] = 0x9000 | kDefaultLeafBits | 1;
    WalkResult res = walker.walk(request(0x1000, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::Translation);
    REQUIRE(res.level == 3);
    REQUIRE(res.reads == 4);
    // A block at level 0.
    m.words[w.root() + 8 * 2] = kDefaultLeafBits | 1;
    res = walker.walk(request(2ull << 39, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::Translation);
    REQUIRE(res.level == 0);
    REQUIRE(res.reads == 1);
}

TEST_CASE("Walker: access flag faults", "[walker][fault]") {
    Memory m;
    auto w = m.writer();
    PageTableWriter::Attrs no_af;
    no_af.af = false;
    w.map_page(0x1000, 0x9000, no_af);
    w.map_block(0x200000, 0x400000, no_af);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    WalkResult res = walker.walk(request(0x1000, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::AccessFlag);
    REQUIRE(res.level == 3);
    REQUIRE(res.reads == 4);
    res = walker.walk(request(0x2ff000, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::AccessFlag);
    REQUIRE(res.level == 2);
    REQUIRE(res.reads == 3);
    // Without SCTLR.AFE the flag is not checked.
    auto r = request(0x1000, w.root());
    r.check_af = false;
    res = walker.walk(r, sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.t.pa_base == 0x9000);
    // AF is checked before permission.
    PageTableWriter::Attrs ro_no_af = no_af;
    ro_no_af.write = false;
    w.map_page(0x3000, 0xa000, ro_no_af);
    res = walker.walk(request(0x3000, w.root(), 16, true), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::AccessFlag);
}

TEST_CASE("Walker: permission faults on writes to read-only pages and blocks", "[walker][fault]") {
    Memory m;
    auto w = m.writer();
    PageTableWriter::Attrs ro;
    ro.write = false;
    w.map_page(0x1000, 0x9000, ro);
    w.map_block(0x200000, 0x400000, ro);
    w.map_page(0x2000, 0xa000);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    WalkResult res = walker.walk(request(0x1000, w.root(), 16, true), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::Permission);
    REQUIRE(res.level == 3);
    REQUIRE(res.reads == 4);
    res = walker.walk(request(0x3ff000, w.root(), 16, true), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::Permission);
    REQUIRE(res.level == 2);
    REQUIRE(res.reads == 3);
    res = walker.walk(request(0x1000, w.root(), 16, false), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::None);
    REQUIRE_FALSE(res.t.writable);
    res = walker.walk(request(0x2000, w.root(), 16, true), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.t.writable);
}

TEST_CASE("Walker: read errors are external faults at the level read", "[walker][fault]") {
    Memory m;
    auto w = m.writer();
    const std::uint64_t va = 0x008040201000ull;
    w.map_page(va, 0x9000);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    for (int level = 0; level <= 3; ++level) {
        CAPTURE(level);
        m.bad = {kTableBase + 0x1000ull * level + 8};
        const WalkResult res = walker.walk(request(va, w.root()), sc_time(100, SC_NS));
        REQUIRE(res.fault == FaultType::External);
        REQUIRE(res.level == level);
        REQUIRE(res.reads == static_cast<unsigned>(level + 1));
        REQUIRE(res.done == sc_time(100 + 50.0 * (level + 1), SC_NS));
    }
}

TEST_CASE("Walker: each read is issued when the previous one returns", "[walker][timing]") {
    Memory m;
    m.latency = sc_time(73, SC_NS);
    auto w = m.writer();
    w.map_page(0x1000, 0x9000);
    w.map_block(0x400000, 0x800000);
    WalkCache cache(0);
    PageTableWalker walker(m.read_fn(), cache);
    const sc_time start(5, SC_US);
    WalkResult res = walker.walk(request(0x1000, w.root()), start);
    REQUIRE(res.done == start + 4 * sc_time(73, SC_NS));
    REQUIRE(m.issued == std::vector<sc_time>{start, start + sc_time(73, SC_NS), start + sc_time(146, SC_NS),
                                             start + sc_time(219, SC_NS)});
    res = walker.walk(request(0x400000, w.root()), start);
    REQUIRE(res.done == start + 3 * sc_time(73, SC_NS));
    // Latency that depends on the address: done is the sum.
    m.address_dependent_latency = true;
    m.clear_log();
    res = walker.walk(request(0x1000, w.root()), start);
    sc_time expect = start;
    for (std::uint64_t pa : m.reads) expect += m.latency_of(pa);
    REQUIRE(m.reads.size() == 4);
    REQUIRE(res.done == expect);
    REQUIRE(m.issued[3] == expect - m.latency_of(m.reads[3]));
}

// ====================================================================== walk cache

TEST_CASE("Walk cache: a second walk in the same 2 MiB region costs 1 read", "[walkcache]") {
    Memory m;
    auto w = m.writer();
    const std::uint64_t va = 0x123456600000ull;
    for (unsigned i = 0; i < 4; ++i) w.map_page(va + i * KiB4, 0x10000 + i * KiB4);
    w.map_page(va + MiB2, 0x20000);   // same 1 GiB, next 2 MiB
    w.map_page(va + GiB1, 0x30000);   // same 512 GiB, next 1 GiB
    w.map_page(va + (1ull << 39), 0x40000);   // next 512 GiB
    WalkCache cache(16);
    PageTableWalker walker(m.read_fn(), cache);
    const sc_time start(0, SC_NS);
    WalkResult res = walker.walk(request(va, w.root()), start);
    REQUIRE(res.reads == 4);
    REQUIRE(res.cache_hits == 0);
    m.clear_log();
    res = walker.walk(request(va + 3 * KiB4, w.root()), start);
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.t.pa_base == 0x13000);
    REQUIRE(res.reads == 1);
    REQUIRE(res.cache_hits == 1);
    REQUIRE(res.done == sc_time(50, SC_NS));
    REQUIRE(m.reads == std::vector<std::uint64_t>{kTableBase + 0x3000 + 8 * idx(va + 3 * KiB4, 3)});
    res = walker.walk(request(va + MiB2, w.root()), start);
    REQUIRE(res.reads == 2);
    REQUIRE(res.cache_hits == 1);
    REQUIRE(res.t.pa_base == 0x20000);
    res = walker.walk(request(va + GiB1, w.root()), start);
    REQUIRE(res.reads == 3);
    REQUIRE(res.cache_hits == 1);
    REQUIRE(res.t.pa_base == 0x30000);
    res = walker.walk(request(va + (1ull << 39), w.root()), start);
    REQUIRE(res.reads == 4);
    REQUIRE(res.cache_hits == 0);
    REQUIRE(res.t.pa_base == 0x40000);
    // Unmapped page in a cached region: the fault costs 1 read.
    res = walker.walk(request(va + 100 * KiB4, w.root()), start);
    REQUIRE(res.fault == FaultType::Translation);
    REQUIRE(res.level == 3);
    REQUIRE(res.reads == 1);
    // A different context bank or table root does not hit.
    auto r = request(va, w.root());
    r.cb = 1;
    REQUIRE(walker.walk(r, start).reads == 4);
    REQUIRE(walker.walk(request(va, w.root() + 0x100000), start).cache_hits == 0);
}

TEST_CASE("Walk cache: a changed table is visible after invalidation", "[walkcache]") {
    Memory m;
    auto w = m.writer();
    const std::uint64_t va = 0x40200000ull;
    w.map_page(va + KiB4, 0x9000);
    WalkCache cache(16);
    PageTableWalker walker(m.read_fn(), cache);
    const sc_time start(0, SC_NS);
    REQUIRE(walker.walk(request(va + KiB4, w.root()), start).reads == 4);
    auto other = request(va + KiB4, w.root());   // the same walk in another context bank
    other.cb = 5;
    REQUIRE(walker.walk(other, start).reads == 4);
    // Leaves are not cached: unmapping is visible at once.
    REQUIRE(w.unmap(va + KiB4));
    WalkResult res = walker.walk(request(va + KiB4, w.root()), start);
    REQUIRE(res.fault == FaultType::Translation);
    REQUIRE(res.reads == 1);
    w.map_page(va + KiB4, 0x9000);
    // A block replaces the level-2 table descriptor: the cached one is stale.
    w.map_block(va, 0x600000);
    res = walker.walk(request(va + KiB4, w.root()), start);
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.t.size == KiB4);   // still the old level-3 table
    REQUIRE(res.t.pa_base == 0x9000);
    REQUIRE(res.reads == 1);
    // Invalidating cb 0 leaves cb 5's entries.
    REQUIRE(cache.invalidate_va(0, va + KiB4) == 3);   // levels 0, 1, 2 on the path
    res = walker.walk(request(va + KiB4, w.root()), start);
    REQUIRE(res.fault == FaultType::None);
    REQUIRE(res.t.size == MiB2);
    REQUIRE(res.t.pa_base == 0x600000);
    REQUIRE(res.reads == 3);
    REQUIRE(res.cache_hits == 0);
    res = walker.walk(request(va + 0x1ff000, w.root()), start);
    REQUIRE(res.reads == 1);
    REQUIRE(res.cache_hits == 1);
    // cb 5 still walks through its (stale) cached level-2 entry.
    const WalkResult stale = walker.walk(other, start);
    REQUIRE(stale.reads == 1);
    REQUIRE(stale.t.size == KiB4);
    REQUIRE(cache.invalidate_cb(5) == 3);
    REQUIRE(walker.walk(other, start).t.size == MiB2);
    REQUIRE(cache.invalidate_all() == 4);   // cb 0: levels 0, 1; cb 5: levels 0, 1
    REQUIRE(cache.invalidate_all() == 0);
    REQUIRE(walker.walk(request(va, w.root()), start).reads == 3);
}

TEST_CASE("Walk cache: lookup returns the deepest level on the VA's path", "[walkcache]") {
    WalkCache c(8);
    std::uint64_t table = 0;
    const std::uint64_t va = 0x123456789000ull;
    REQUIRE(c.lookup(0, 0x1000, va, table) == -1);
    c.insert(0, 0x1000, va, 0, 0xa000);
    c.insert(0, 0x1000, va, 1, 0xb000);
    REQUIRE(c.lookup(0, 0x1000, va, table) == 1);
    REQUIRE(table == 0xb000);
    c.insert(0, 0x1000, va, 2, 0xc000);
    REQUIRE(c.lookup(0, 0x1000, va + 0x1ff000 - (va & 0x1ff000), table) == 2);
    REQUIRE(table == 0xc000);
    REQUIRE(c.lookup(0, 0x1000, (va & ~(MiB2 - 1)) + MiB2, table) == 1);   // next 2 MiB
    REQUIRE(table == 0xb000);
    REQUIRE(c.lookup(0, 0x1000, (va & ~(GiB1 - 1)) + GiB1, table) == 0);   // next 1 GiB
    REQUIRE(table == 0xa000);
    REQUIRE(c.lookup(0, 0x1000, va + (1ull << 39), table) == -1);
    REQUIRE(c.lookup(1, 0x1000, va, table) == -1);
    REQUIRE(c.lookup(0, 0x2000, va, table) == -1);
    // Inserting the same key again updates it.
    c.insert(0, 0x1000, va, 2, 0xd000);
    REQUIRE(c.lookup(0, 0x1000, va, table) == 2);
    REQUIRE(table == 0xd000);
    REQUIRE(c.invalidate_all() == 3);
    REQUIRE_THROWS_AS(c.insert(0, 0x1000, va, 3, 0), std::logic_error);
}

TEST_CASE("Walk cache: LRU replacement and invalidation by VA", "[walkcache]") {
    WalkCache c(2);
    std::uint64_t table = 0;
    const std::uint64_t a = 0, b = 1ull << 39, d = 2ull << 39;
    c.insert(0, 0x1000, a, 0, 0xa000);
    c.insert(0, 0x1000, b, 0, 0xb000);
    REQUIRE(c.lookup(0, 0x1000, a, table) == 0);   // a is now the most recent
    c.insert(0, 0x1000, d, 0, 0xd000);   // evicts b
    REQUIRE(c.lookup(0, 0x1000, b, table) == -1);
    REQUIRE(c.lookup(0, 0x1000, d, table) == 0);
    REQUIRE(table == 0xd000);
    REQUIRE(c.lookup(0, 0x1000, a, table) == 0);
    REQUIRE(table == 0xa000);
    c.insert(0, 0x1000, b, 0, 0xb000);   // evicts d (a was used last)
    REQUIRE(c.lookup(0, 0x1000, d, table) == -1);
    REQUIRE(c.lookup(0, 0x1000, a, table) == 0);

    WalkCache v(8);
    const std::uint64_t va = 0x40200000ull;
    v.insert(0, 0x1000, va, 0, 1);
    v.insert(0, 0x1000, va, 1, 2);
    v.insert(0, 0x1000, va, 2, 3);
    v.insert(0, 0x1000, va + MiB2, 2, 4);   // other 2 MiB
    v.insert(1, 0x1000, va, 2, 5);   // other cb
    REQUIRE(v.invalidate_va(0, va + 0x1234) == 3);
    REQUIRE(v.lookup(0, 0x1000, va, table) == -1);
    REQUIRE(v.lookup(0, 0x1000, va + MiB2, table) == 2);
    REQUIRE(table == 4);
    REQUIRE(v.lookup(1, 0x1000, va, table) == 2);
    REQUIRE(v.invalidate_cb(0) == 1);
    REQUIRE(v.invalidate_cb(0) == 0);
    REQUIRE(v.invalidate_all() == 1);

    WalkCache none(0);
    none.insert(0, 0x1000, va, 0, 1);
    REQUIRE(none.lookup(0, 0x1000, va, table) == -1);
}

TEST_CASE("Walk cache: a walk fills every table descriptor it reads, even when it faults", "[walkcache]") {
    Memory m;
    auto w = m.writer();
    w.map_page(0x1000, 0x9000);
    PageTableWriter::Attrs no_af;
    no_af.af = false;
    w.map_page(0x2000, 0xa000, no_af);
    WalkCache cache(16);
    PageTableWalker walker(m.read_fn(), cache);
    const WalkResult res = walker.walk(request(0x2000, w.root()), sc_time(0, SC_NS));
    REQUIRE(res.fault == FaultType::AccessFlag);
    std::uint64_t table = 0;
    REQUIRE(cache.lookup(0, w.root(), 0x1000, table) == 2);
    REQUIRE(table == kTableBase + 0x3000);
    REQUIRE(cache.invalidate_all() == 3);
}

// ====================================================================== TLB

TEST_CASE("TLB: replacement policy names", "[tlb]") {
    REQUIRE(parse_replacement("lru") == TlbReplacement::Lru);
    REQUIRE(parse_replacement("round-robin") == TlbReplacement::RoundRobin);
    REQUIRE_THROWS_AS(parse_replacement("random"), std::invalid_argument);
    REQUIRE_THROWS_AS(parse_replacement("LRU"), std::invalid_argument);
}

TEST_CASE("TLB: geometry", "[tlb]") {
    REQUIRE(Tlb(32, 32, TlbReplacement::Lru).entries() == 32);
    REQUIRE(Tlb(512, 4, TlbReplacement::RoundRobin).entries() == 512);
    REQUIRE_THROWS_AS(Tlb(0, 1, TlbReplacement::Lru), std::invalid_argument);
    REQUIRE_THROWS_AS(Tlb(8, 0, TlbReplacement::Lru), std::invalid_argument);
    REQUIRE_THROWS_AS(Tlb(10, 4, TlbReplacement::Lru), std::invalid_argument);
    Tlb t(8, 2, TlbReplacement::Lru);
    REQUIRE_THROWS_AS(t.insert(entry(0, 0, GiB1, 0, 0)), std::logic_error);
}

TEST_CASE("TLB and walk cache: before their first fill they miss and invalidate nothing", "[tlb][walkcache]") {
    // Their storage is allocated on the first insert (an idle node's SMMU
    // never translates); until then every operation sees an empty cache.
    for (auto policy : {TlbReplacement::Lru, TlbReplacement::RoundRobin}) {
        Tlb tlb(512, 4, policy);
        REQUIRE(tlb.entries() == 512);
        REQUIRE(tlb.occupied() == 0);
        REQUIRE(tlb.lookup(0, 1, 0x5000) == nullptr);
        REQUIRE(tlb.invalidate_va(0, 1, 0x5000) == 0);
        REQUIRE(tlb.invalidate_asid(0, 1) == 0);
        REQUIRE(tlb.invalidate_all(0) == 0);
        tlb.insert(entry(0x5000, 0x9000, KiB4, 0, 1));
        REQUIRE(tlb.entries() == 512);
        REQUIRE(tlb.occupied() == 1);
        REQUIRE(tlb.lookup(0, 1, 0x5000)->pa_base == 0x9000);
        REQUIRE(tlb.invalidate_all(0) == 1);
        REQUIRE(tlb.occupied() == 0);
    }
    WalkCache wc(4);
    std::uint64_t table = 0;
    REQUIRE(wc.lookup(0, kTableBase, 0x5000, table) == -1);
    REQUIRE(wc.invalidate_va(0, 0x5000) == 0);
    REQUIRE(wc.invalidate_cb(0) == 0);
    REQUIRE(wc.invalidate_all() == 0);
    wc.insert(0, kTableBase, 0x5000, 1, 0x81000000);
    REQUIRE(wc.lookup(0, kTableBase, 0x5000, table) == 1);
    REQUIRE(table == 0x81000000);
    WalkCache none(0);   // no entries: inserts are dropped
    none.insert(0, kTableBase, 0x5000, 1, 0x81000000);
    REQUIRE(none.lookup(0, kTableBase, 0x5000, table) == -1);
}

TEST_CASE("TLB: hits and misses by page, context bank and ASID", "[tlb]") {
    Tlb tlb(32, 32, TlbReplacement::Lru);
    REQUIRE(tlb.occupied() == 0);
    REQUIRE(tlb.lookup(0, 1, 0x5000) == nullptr);
    tlb.insert(entry(0x5000, 0x9000, KiB4, 0, 1));
    tlb.insert(entry(0x7000, 0xa000, KiB4, 0, 1, true));
    REQUIRE(tlb.occupied() == 2);
    const Translation* t = tlb.lookup(0, 1, 0x5fff);
    REQUIRE(t);
    REQUIRE(t->pa_base == 0x9000);
    REQUIRE(t->va_base == 0x5000);
    REQUIRE(tlb.lookup(0, 1, 0x4fff) == nullptr);
    REQUIRE(tlb.lookup(0, 1, 0x6000) == nullptr);
    REQUIRE(tlb.lookup(0, 2, 0x5000) == nullptr);   // other ASID
    REQUIRE(tlb.lookup(1, 1, 0x5000) == nullptr);   // other context bank
    // Global: any ASID of its context bank, not another bank.
    REQUIRE(tlb.lookup(0, 1, 0x7000));
    REQUIRE(tlb.lookup(0, 99, 0x7abc));
    REQUIRE(tlb.lookup(0, 99, 0x7abc)->pa_base == 0xa000);
    REQUIRE(tlb.lookup(1, 1, 0x7000) == nullptr);
    // Re-inserting the same page replaces it.
    tlb.insert(entry(0x5000, 0xb000, KiB4, 0, 1));
    REQUIRE(tlb.occupied() == 2);
    REQUIRE(tlb.lookup(0, 1, 0x5000)->pa_base == 0xb000);
    // Same page, other ASID: a second entry.
    tlb.insert(entry(0x5000, 0xc000, KiB4, 0, 2));
    REQUIRE(tlb.occupied() == 3);
    REQUIRE(tlb.lookup(0, 2, 0x5000)->pa_base == 0xc000);
    REQUIRE(tlb.lookup(0, 1, 0x5000)->pa_base == 0xb000);
    // Same page and ASID in another bank: a second entry.
    tlb.insert(entry(0x5000, 0xd000, KiB4, 1, 1));
    REQUIRE(tlb.occupied() == 4);
    REQUIRE(tlb.lookup(1, 1, 0x5000)->pa_base == 0xd000);
    // A global entry answers every ASID, so it replaces the same page of any
    // ASID (and is replaced by it): never two entries for one lookup.
    tlb.insert(entry(0x9000, 0x1000, KiB4, 0, 1, true));
    tlb.insert(entry(0x9000, 0x2000, KiB4, 0, 2));
    REQUIRE(tlb.occupied() == 5);
    REQUIRE(tlb.lookup(0, 1, 0x9000) == nullptr);
    REQUIRE(tlb.lookup(0, 2, 0x9000)->pa_base == 0x2000);
    tlb.insert(entry(0x9000, 0x3000, KiB4, 0, 3, true));
    REQUIRE(tlb.occupied() == 5);
    REQUIRE(tlb.lookup(0, 2, 0x9000)->pa_base == 0x3000);
    REQUIRE(tlb.lookup(0, 1, 0x9000)->global);
}

TEST_CASE("TLB: a block entry and page entries in a set-associative TLB", "[tlb]") {
    Tlb tlb(8, 2, TlbReplacement::Lru);   // 4 sets
    // Block at 6 MiB: block set (6M >> 21) % 4 = 3. Pages of that block are in sets 0..3.
    tlb.insert(entry(3 * MiB2, 0x40000000, MiB2, 0, 1));
    for (unsigned i = 0; i < 512; ++i) REQUIRE(tlb.lookup(0, 1, 3 * MiB2 + i * KiB4));
    // Fill page set 3 with two pages of other regions; the block is in set 3 too.
    tlb.insert(entry(3 * KiB4, 0x1000, KiB4, 0, 1));   // set 3 now full (block + page)
    REQUIRE(tlb.occupied() == 2);
    // The block is older than that page: a page in set 3 evicts the block.
    tlb.insert(entry(7 * KiB4, 0x2000, KiB4, 0, 1));
    REQUIRE(tlb.occupied() == 2);
    REQUIRE(tlb.lookup(0, 1, 3 * MiB2) == nullptr);
    REQUIRE(tlb.lookup(0, 1, 3 * KiB4));
    REQUIRE(tlb.lookup(0, 1, 7 * KiB4));
    // Blocks in block set 0 (0, 8 MiB, 16 MiB) conflict with each other.
    tlb.insert(entry(0, 0x40000000, MiB2, 0, 1));
    tlb.insert(entry(4 * MiB2, 0x40200000, MiB2, 0, 1));
    REQUIRE(tlb.lookup(0, 1, 0x1000));   // block 0 used last
    tlb.insert(entry(8 * MiB2, 0x40400000, MiB2, 0, 1));
    REQUIRE(tlb.lookup(0, 1, 4 * MiB2) == nullptr);
    REQUIRE(tlb.lookup(0, 1, 8 * MiB2 + 0x123000)->pa_base == 0x40400000);
    REQUIRE(tlb.lookup(0, 1, 0x1ff000)->pa_base == 0x40000000);
    REQUIRE(tlb.occupied() == 4);
}

TEST_CASE("TLB: LRU victim in a full set", "[tlb]") {
    Tlb tlb(8, 2, TlbReplacement::Lru);   // 4 sets; pages 0, 4, 8, 12, 16 share set 0
    auto page = [](unsigned n) { return n * KiB4; };
    tlb.insert(entry(page(1), 0x1000, KiB4, 0, 0));   // set 1, never touched again
    tlb.insert(entry(page(0), 0x10000, KiB4, 0, 0));
    tlb.insert(entry(page(4), 0x14000, KiB4, 0, 0));
    REQUIRE(tlb.lookup(0, 0, page(0)));
    tlb.insert(entry(page(8), 0x18000, KiB4, 0, 0));   // evicts 4
    REQUIRE(tlb.lookup(0, 0, page(4)) == nullptr);
    REQUIRE(tlb.lookup(0, 0, page(8)));
    REQUIRE(tlb.lookup(0, 0, page(0)));   // 8 is now least recent
    tlb.insert(entry(page(12), 0x1c000, KiB4, 0, 0));   // evicts 8
    REQUIRE(tlb.lookup(0, 0, page(8)) == nullptr);
    REQUIRE(tlb.lookup(0, 0, page(0)));
    REQUIRE(tlb.lookup(0, 0, page(12)));
    REQUIRE(tlb.lookup(0, 0, page(1)));
    REQUIRE(tlb.occupied() == 3);
    // A freed way is filled before anything is evicted.
    REQUIRE(tlb.invalidate_va(0, 0, page(12)) == 1);
    tlb.insert(entry(page(16), 0x20000, KiB4, 0, 0));
    REQUIRE(tlb.lookup(0, 0, page(0)));
    REQUIRE(tlb.lookup(0, 0, page(16)));
    REQUIRE(tlb.occupied() == 3);
}

TEST_CASE("TLB: round-robin victim in a full set", "[tlb]") {
    Tlb tlb(8, 2, TlbReplacement::RoundRobin);
    auto page = [](unsigned n) { return n * KiB4; };
    tlb.insert(entry(page(1), 0x1000, KiB4, 0, 0));   // set 1: its own pointer
    tlb.insert(entry(page(0), 0x10000, KiB4, 0, 0));   // way 0
    tlb.insert(entry(page(4), 0x14000, KiB4, 0, 0));   // way 1
    REQUIRE(tlb.lookup(0, 0, page(0)));   // use does not matter
    tlb.insert(entry(page(8), 0x18000, KiB4, 0, 0));   // evicts way 0 (page 0)
    REQUIRE(tlb.lookup(0, 0, page(0)) == nullptr);
    REQUIRE(tlb.lookup(0, 0, page(4)));
    REQUIRE(tlb.lookup(0, 0, page(8)));
    tlb.insert(entry(page(12), 0x1c000, KiB4, 0, 0));   // evicts way 1 (page 4)
    REQUIRE(tlb.lookup(0, 0, page(4)) == nullptr);
    REQUIRE(tlb.lookup(0, 0, page(8)));
    REQUIRE(tlb.lookup(0, 0, page(12)));
    // A freed way is filled first and the pointer does not move: it still names way 0.
    REQUIRE(tlb.invalidate_va(0, 0, page(12)) == 1);
    tlb.insert(entry(page(16), 0x20000, KiB4, 0, 0));   // into way 1
    REQUIRE(tlb.lookup(0, 0, page(8)));
    tlb.insert(entry(page(20), 0x24000, KiB4, 0, 0));   // evicts way 0 (page 8)
    REQUIRE(tlb.lookup(0, 0, page(8)) == nullptr);
    REQUIRE(tlb.lookup(0, 0, page(16)));
    REQUIRE(tlb.lookup(0, 0, page(20)));
    tlb.insert(entry(page(24), 0x28000, KiB4, 0, 0));   // evicts way 1 (page 16)
    REQUIRE(tlb.lookup(0, 0, page(16)) == nullptr);
    REQUIRE(tlb.lookup(0, 0, page(1)));
    REQUIRE(tlb.occupied() == 3);
}

TEST_CASE("TLB: invalidation by VA", "[tlb]") {
    Tlb tlb(64, 4, TlbReplacement::Lru);
    const std::uint64_t v = 0x40203000ull, block = 0x40200000ull;
    tlb.insert(entry(v, 0x1000, KiB4, 0, 1));   // removed
    tlb.insert(entry(v, 0x2000, KiB4, 0, 2));   // other ASID: stays
    tlb.insert(entry(block, 0x600000, MiB2, 0, 3, true));   // global block containing v: removed
    tlb.insert(entry(v, 0x3000, KiB4, 1, 1));   // other cb: stays
    tlb.insert(entry(v + KiB4, 0x4000, KiB4, 0, 1));   // other page: stays
    tlb.insert(entry(block + MiB2, 0x800000, MiB2, 0, 1));   // other block: stays
    REQUIRE(tlb.occupied() == 6);
    REQUIRE(tlb.invalidate_va(0, 1, v + 0x123) == 2);
    REQUIRE(tlb.occupied() == 4);
    REQUIRE(tlb.lookup(0, 1, v) == nullptr);
    REQUIRE(tlb.lookup(0, 2, v)->pa_base == 0x2000);
    REQUIRE(tlb.lookup(1, 1, v)->pa_base == 0x3000);
    REQUIRE(tlb.lookup(0, 1, v + KiB4)->pa_base == 0x4000);
    REQUIRE(tlb.lookup(0, 1, block + MiB2)->pa_base == 0x800000);
    REQUIRE(tlb.lookup(0, 3, block) == nullptr);
    REQUIRE(tlb.invalidate_va(0, 1, v) == 0);
    // A non-global block goes by its ASID; any VA inside it names it.
    REQUIRE(tlb.invalidate_va(0, 2, block + MiB2 + 0x1fffff) == 0);
    REQUIRE(tlb.invalidate_va(0, 1, block + MiB2 + 0x1fffff) == 1);
    REQUIRE(tlb.occupied() == 3);
}

TEST_CASE("TLB: invalidation by ASID and of a whole context bank", "[tlb]") {
    Tlb tlb(64, 4, TlbReplacement::RoundRobin);
    for (unsigned i = 0; i < 3; ++i) tlb.insert(entry(i * KiB4, 0x1000 * i, KiB4, 0, 2));   // removed
    tlb.insert(entry(0x100000, 0x9000, KiB4, 0, 2, true));   // global: stays
    tlb.insert(entry(0x200000, 0, MiB2, 0, 2));   // block of asid 2: removed
    tlb.insert(entry(0x0, 0xa000, KiB4, 0, 1));   // asid 1: stays
    tlb.insert(entry(0x0, 0xb000, KiB4, 1, 2));   // cb 1: stays
    REQUIRE(tlb.occupied() == 7);
    REQUIRE(tlb.invalidate_asid(0, 2) == 4);
    REQUIRE(tlb.occupied() == 3);
    REQUIRE(tlb.lookup(0, 2, 0x1000) == nullptr);
    REQUIRE(tlb.lookup(0, 2, 0x200000) == nullptr);
    REQUIRE(tlb.lookup(0, 2, 0x100000));
    REQUIRE(tlb.lookup(0, 1, 0x0)->pa_base == 0xa000);
    REQUIRE(tlb.lookup(1, 2, 0x0)->pa_base == 0xb000);
    REQUIRE(tlb.invalidate_asid(0, 2) == 0);
    REQUIRE(tlb.invalidate_all(0) == 2);   // the global entry and asid 1
    REQUIRE(tlb.occupied() == 1);
    REQUIRE(tlb.lookup(0, 2, 0x100000) == nullptr);
    REQUIRE(tlb.lookup(1, 2, 0x0));
    REQUIRE(tlb.invalidate_all(0) == 0);
    REQUIRE(tlb.invalidate_all(1) == 1);
    REQUIRE(tlb.occupied() == 0);
}

TEST_CASE("TLB: walker results go in and come out unchanged", "[tlb][walker]") {
    Memory m;
    auto w = m.writer();
    PageTableWriter::Attrs g;
    g.global = true;
    g.write = false;
    w.map_page(0x5000, 0x9000, g);
    WalkCache cache(4);
    PageTableWalker walker(m.read_fn(), cache);
    auto r = request(0x5123, w.root());
    r.cb = 2;
    r.asid = 9;
    WalkResult res = walker.walk(r, sc_time(0, SC_NS));
    res.t.valid_from = res.done;
    Tlb tlb(32, 4, TlbReplacement::Lru);
    tlb.insert(res.t);
    const Translation* t = tlb.lookup(2, 123, 0x5fff);
    REQUIRE(t);
    REQUIRE(t->pa_base == 0x9000);
    REQUIRE(t->global);
    REQUIRE_FALSE(t->writable);
    REQUIRE(t->valid_from == sc_time(200, SC_NS));
}

// ====================================================================== randomized

namespace {

// An independent reference: recursive decode of the descriptor tree.
struct RefOutcome {
    FaultType fault = FaultType::None;
    int level = 0;
    std::uint64_t va_base = 0, pa_base = 0, size = 0;
    bool global = false, writable = false, user = false;
    std::vector<std::uint64_t> reads;
};

constexpr std::uint64_t kOa48 = (1ull << 48) - 1;

void ref_leaf(const WalkRequest& r, std::uint64_t d, unsigned shift, RefOutcome& o) {
    const bool af = (d >> 10) & 1, read_only = (d >> 7) & 1;
    if (r.check_af && !af) {
        o.fault = FaultType::AccessFlag;
        return;
    }
    if (r.write && read_only) {
        o.fault = FaultType::Permission;
        return;
    }
    const std::uint64_t span = 1ull << shift;
    const std::uint64_t size = span < MiB2 ? span : MiB2;
    const std::uint64_t out = ((d & kOa48) >> shift) << shift;
    o.size = size;
    o.va_base = r.va / size * size;
    o.pa_base = out + (r.va % span) / size * size;
    o.global = !((d >> 11) & 1);
    o.writable = !read_only;
    o.user = (d >> 6) & 1;
}

void ref_descend(const Memory& m, const WalkRequest& r, std::uint64_t table, int level, RefOutcome& o) {
    const unsigned shift = 12 + 9 * (3 - level);
    const std::uint64_t at = table + ((r.va >> shift) & 511) * 8;
    o.reads.push_back(at);
    o.level = level;
    if (m.bad.count(at)) {
        o.fault = FaultType::External;
        return;
    }
    const std::uint64_t d = m.get(at);
    switch (d & 3) {
    case 0:
    case 2: o.fault = FaultType::Translation; return;
    case 1:   // block: levels 1 and 2 only
        if (level == 0 || level == 3) o.fault = FaultType::Translation;
        else ref_leaf(r, d, shift, o);
        return;
    default:   // table, or page at level 3
        if (level == 3) ref_leaf(r, d, shift, o);
        else ref_descend(m, r, (d & kOa48) & ~0xfffull, level + 1, o);
    }
}

RefOutcome reference_walk(const Memory& m, const WalkRequest& r) {
    const unsigned bits = 64 - r.t0sz;
    const int levels = static_cast<int>((bits - 12 + 8) / 9);
    RefOutcome o;
    o.level = 4 - levels;
    if (r.va >= (1ull << bits)) {
        o.fault = FaultType::Translation;
        return o;
    }
    ref_descend(m, r, r.ttbr & kOa48 & ~0xfffull, 4 - levels, o);
    return o;
}

}   // namespace

TEST_CASE("Walker agrees with an independent reference on random page tables", "[walker][random]") {
    std::mt19937_64 rng(20240611);
    auto chance = [&rng](unsigned percent) { return rng() % 100 < percent; };
    std::map<std::pair<FaultType, int>, unsigned> seen;   // outcome, level
    unsigned cached_walks = 0, one_gib = 0, queries = 0;

    for (int round = 0; round < 80; ++round) {
        const unsigned t0sz =
            round < 6 ? std::vector<unsigned>{16, 25, 39, 24, 33, 34}[round] : 16 + static_cast<unsigned>(rng() % 24);
        CAPTURE(round, t0sz);
        const unsigned bits = 64 - t0sz;
        const std::uint64_t range = 1ull << bits;
        Memory m;
        m.address_dependent_latency = true;
        auto w = m.writer(t0sz);
        const int start = aarch64::start_level(t0sz);

        // Regions: 1 GiB windows (or the whole input range when smaller), so
        // that mappings share tables.
        const std::uint64_t window = std::min(range, GiB1);
        std::vector<std::uint64_t> regions;
        for (int i = 0; i < 3; ++i) regions.push_back((rng() % (range / window)) * window);
        struct Item {
            std::uint64_t va, size;
        };
        std::vector<Item> items;
        auto random_attrs = [&] {
            PageTableWriter::Attrs a;
            a.write = chance(70);
            a.user = chance(50);
            a.af = chance(85);
            a.global = chance(30);
            a.attr_index = static_cast<unsigned>(rng() % 8);
            return a;
        };
        const std::uint64_t slots = std::min<std::uint64_t>(8, window / MiB2);
        for (int i = 0; i < 40; ++i) {
            const std::uint64_t base = regions[rng() % regions.size()] + (rng() % slots) * MiB2;
            const std::uint64_t pa = (rng() % (1ull << 27)) * MiB2;   // up to 2^48
            try {
                if (chance(25)) {
                    w.map_block(base, pa, random_attrs());
                    items.push_back({base, MiB2});
                } else {
                    const std::uint64_t va = base + (rng() % 32) * KiB4;
                    w.map_page(va, pa + (rng() % 512) * KiB4, random_attrs());
                    items.push_back({va, KiB4});
                }
            } catch (const std::logic_error&) {   // a page inside a block
            }
        }
        // Hand-made descriptors: upper attribute bits, reserved and invalid leaves.
        for (int i = 0; i < 6 && !items.empty(); ++i) {
            const std::uint64_t at = w.leaf_address(items[rng() % items.size()].va);
            if (!at) continue;
            std::uint64_t& d = m.words[at];
            switch (rng() % 3) {
            case 0: d |= rng() & 0xfff0000000000000ull; break;
            case 1: d &= ~2ull; break;   // reserved at level 3, a block at level 2 (with RES0 bits maybe)
            default: d &= ~1ull; break;
            }
        }
        // A level-1 block and a level-0 block in empty slots.
        if (start <= 1) {
            std::uint64_t l1 = w.root();
            const std::uint64_t r0 = regions[0];
            if (start == 0) l1 = m.get(w.root() + 8 * ((r0 >> 39) & 511)) & aarch64::kAddrMask;
            if (l1) {
                for (int tries = 0; tries < 8; ++tries) {
                    const std::uint64_t i1 = rng() % std::min<std::uint64_t>(512, (range >> 30));
                    const std::uint64_t va = (start == 0 ? (r0 & ~((1ull << 39) - 1)) : 0) + (i1 << 30);
                    if (m.get(l1 + 8 * i1) != 0 || va >= range) continue;
                    m.words[l1 + 8 * i1] = (rng() % (1ull << 18)) * GiB1 | PageTableWriter::leaf_bits(random_attrs()) |
                                           (chance(50) ? (rng() & 0x3ffff000ull) : 0) | 1;
                    items.push_back({va, GiB1});
                    break;
                }
            }
        }
        if (start == 0) {
            const std::uint64_t i0 = rng() % (range >> 39);
            if (m.get(w.root() + 8 * i0) == 0) {
                m.words[w.root() + 8 * i0] = PageTableWriter::leaf_bits(PageTableWriter::Attrs{}) | 1;
                items.push_back({i0 << 39, KiB4});
            }
        }

        // Queries: inside items, near them, anywhere, and beyond the input range.
        std::vector<std::uint64_t> vas;
        for (const Item& it : items)
            for (int k = 0; k < 3; ++k) vas.push_back(it.va + rng() % it.size);
        for (int k = 0; k < 40; ++k) vas.push_back(regions[rng() % regions.size()] + (rng() % (slots * MiB2)));
        for (int k = 0; k < 10; ++k) vas.push_back(rng() % range);
        for (int k = 0; k < 4; ++k) vas.push_back(range + rng() % (~0ull - range));
        // Read errors on a few descriptors the walks will need.
        for (int k = 0; k < 2; ++k) {
            WalkRequest probe;
            probe.va = vas[rng() % vas.size()];
            probe.ttbr = w.root();
            probe.t0sz = t0sz;
            const RefOutcome o = reference_walk(m, probe);
            if (!o.reads.empty()) m.bad.insert(o.reads[rng() % o.reads.size()]);
        }
        std::shuffle(vas.begin(), vas.end(), rng);

        WalkCache no_cache(0), small_cache(6);
        PageTableWalker plain(m.read_fn(), no_cache), cached(m.read_fn(), small_cache);
        for (const std::uint64_t va : vas) {
            WalkRequest r;
            r.va = va;
            r.ttbr = w.root();
            r.t0sz = t0sz;
            r.cb = static_cast<unsigned>(rng() % 2);
            r.asid = static_cast<std::uint16_t>(rng() % 4);
            r.write = chance(50);
            r.check_af = chance(80);
            CAPTURE(va, r.cb, r.write, r.check_af);
            const RefOutcome ref = reference_walk(m, r);
            const sc_time start_time(static_cast<double>(rng() % 1000), SC_NS);
            sc_time expect_done = start_time;
            for (std::uint64_t pa : ref.reads) expect_done += m.latency_of(pa);
            ++queries;

            for (int variant = 0; variant < 2; ++variant) {
                CAPTURE(variant);
                m.clear_log();
                const WalkResult res = (variant == 0 ? plain : cached).walk(r, start_time);
                REQUIRE(res.fault == ref.fault);
                REQUIRE(res.level == ref.level);
                if (ref.fault == FaultType::None) {
                    REQUIRE(res.t.va_base == ref.va_base);
                    REQUIRE(res.t.pa_base == ref.pa_base);
                    REQUIRE(res.t.size == ref.size);
                    REQUIRE(res.t.global == ref.global);
                    REQUIRE(res.t.writable == ref.writable);
                    REQUIRE(res.t.user == ref.user);
                    REQUIRE(res.t.cb == r.cb);
                    REQUIRE(res.t.asid == r.asid);
                }
                REQUIRE(res.reads == m.reads.size());
                if (variant == 0) {
                    REQUIRE(res.cache_hits == 0);
                    REQUIRE(m.reads == ref.reads);
                    REQUIRE(res.done == expect_done);
                } else {
                    // The cached walk reads a tail of the reference's reads.
                    REQUIRE(m.reads.size() <= ref.reads.size());
                    REQUIRE(std::equal(m.reads.begin(), m.reads.end(), ref.reads.end() - m.reads.size()));
                    REQUIRE((res.cache_hits == 1) == (m.reads.size() < ref.reads.size()));
                    if (!ref.reads.empty()) REQUIRE(!m.reads.empty());
                    sc_time done = start_time;
                    for (std::uint64_t pa : m.reads) done += m.latency_of(pa);
                    REQUIRE(res.done == done);
                    cached_walks += res.cache_hits;
                }
                for (std::size_t i = 0; i < m.issued.size(); ++i) {
                    sc_time at = start_time;
                    for (std::size_t j = 0; j < i; ++j) at += m.latency_of(m.reads[j]);
                    REQUIRE(m.issued[i] == at);
                }
            }
            if (ref.fault == FaultType::None && ref.size == MiB2 && ref.level == 1) ++one_gib;
            ++seen[{ref.fault, ref.level}];
        }
    }
    // The random tables reached every outcome.
    INFO("queries " << queries);
    for (int level = 0; level <= 3; ++level) {
        CAPTURE(level);
        REQUIRE(seen[{FaultType::Translation, level}] > 0);
        REQUIRE(seen[{FaultType::External, level}] > 0);
    }
    for (int level = 1; level <= 3; ++level) {
        CAPTURE(level);
        REQUIRE(seen[{FaultType::None, level}] > 0);
    }
    for (int level = 2; level <= 3; ++level) {
        CAPTURE(level);
        REQUIRE(seen[{FaultType::AccessFlag, level}] > 0);
        REQUIRE(seen[{FaultType::Permission, level}] > 0);
    }
    REQUIRE(one_gib > 0);
    REQUIRE(cached_walks > 0);
}

// The TLB answers a lookup that no entry can match without scanning a set
// (per-bucket counts of its entries' page and block numbers). The answers
// must be those of a plain scan: a reference TLB that scans every slot,
// with the same documented fill and replacement rules, runs the same random
// inserts, lookups and invalidations. Page and block numbers are chosen to
// collide in the buckets (multiples of 64) and entries of other context
// banks and ASIDs share them, so a count left wrong by a replacement or an
// invalidation turns into a missed hit here.
namespace {
struct ScanTlb {
    struct Slot {
        Translation t;
        bool valid = false;
        std::uint64_t stamp = 0;
    };
    unsigned sets, ways;
    TlbReplacement policy;
    std::vector<Slot> slots;
    std::vector<unsigned> rr;   // round-robin pointer per set
    std::uint64_t clock = 0;
    ScanTlb(unsigned entries, unsigned w, TlbReplacement p = TlbReplacement::Lru)
        : sets(entries / w), ways(w), policy(p), slots(entries), rr(entries / w, 0) {}
    unsigned set_of(std::uint64_t va, std::uint64_t size) const {
        return static_cast<unsigned>((size == KiB4 ? va >> 12 : va >> 21) % sets);
    }
    static bool matches(const Translation& t, unsigned cb, std::uint16_t asid, std::uint64_t va) {
        return t.cb == cb && (t.global || t.asid == asid) && t.contains(va);
    }
    const Translation* lookup(unsigned cb, std::uint16_t asid, std::uint64_t va) {
        const unsigned s[2] = {set_of(va, KiB4), set_of(va, MiB2)};
        for (int i = 0; i < 2; ++i) {
            if (i == 1 && s[1] == s[0]) break;
            for (unsigned w = 0; w < ways; ++w) {
                Slot& x = slots[s[i] * ways + w];
                if (x.valid && matches(x.t, cb, asid, va)) {
                    x.stamp = ++clock;
                    return &x.t;
                }
            }
        }
        return nullptr;
    }
    void insert(const Translation& t) {
        const unsigned set = set_of(t.va_base, t.size);
        Slot* s = &slots[set * ways];
        Slot* target = nullptr;
        for (unsigned w = 0; w < ways && !target; ++w)
            if (s[w].valid && s[w].t.cb == t.cb && s[w].t.va_base == t.va_base && s[w].t.size == t.size &&
                (s[w].t.global || t.global || s[w].t.asid == t.asid))
                target = &s[w];
        for (unsigned w = 0; w < ways && !target; ++w)
            if (!s[w].valid) target = &s[w];
        if (!target && policy == TlbReplacement::RoundRobin) {
            target = &s[rr[set]];
            rr[set] = (rr[set] + 1) % ways;
        }
        if (!target) {
            target = &s[0];
            for (unsigned w = 1; w < ways; ++w)
                if (s[w].stamp < target->stamp) target = &s[w];
        }
        target->t = t;
        target->valid = true;
        target->stamp = ++clock;
    }
    template <class F>
    unsigned drop_if(F f) {
        unsigned n = 0;
        for (Slot& x : slots)
            if (x.valid && f(x.t)) {
                x.valid = false;
                ++n;
            }
        return n;
    }
};
}   // namespace

TEST_CASE("TLB: lookups answered without a scan equal a plain scan's", "[tlb]") {
    // Fully and set associative, a way count that is no power of two (a set
    // keeps room for its ways filled so far, doubling up to all of them) and
    // a TLB whose sets are mostly never filled; both policies.
    struct Geometry {
        unsigned entries, ways;
    };
    for (const Geometry g : {Geometry{32, 32}, Geometry{32, 4}, Geometry{36, 6}, Geometry{512, 4}, Geometry{16, 1}})
        for (const auto policy : {TlbReplacement::Lru, TlbReplacement::RoundRobin}) {
            const unsigned ways = g.ways;
            Tlb tlb(g.entries, ways, policy);
            ScanTlb ref(g.entries, ways, policy);
            std::mt19937_64 rng(ways + g.entries);
            // 48 pages and 8 blocks: numbers 64 apart share a bucket, the others
            // spread over 16 (pages) and 4 (blocks) buckets, most buckets empty.
            auto va_of = [&](bool block) {
                if (block) return ((rng() % 2) * 64 + rng() % 4) * MiB2 + (rng() % 512) * KiB4;
                return ((rng() % 3) * 64 + rng() % 16) * KiB4;
            };
            unsigned hits = 0, fills = 0;
            for (int step = 0; step < 20000; ++step) {
                const unsigned cb = static_cast<unsigned>(rng() % 2);
                const auto asid = static_cast<std::uint16_t>(rng() % 3);
                const unsigned op = static_cast<unsigned>(rng() % 100);
                if (op < 40) {
                    const bool block = rng() % 4 == 0;
                    const std::uint64_t va = va_of(block) & ~((block ? MiB2 : KiB4) - 1);
                    const Translation t = entry(va, 0x100000000ull + static_cast<std::uint64_t>(step) * KiB4,
                                                block ? MiB2 : KiB4, cb, asid, rng() % 5 == 0);
                    tlb.insert(t);
                    ref.insert(t);
                    ++fills;
                } else if (op < 94) {
                    const std::uint64_t va = va_of(rng() % 4 == 0) + rng() % KiB4;
                    const Translation* a = tlb.lookup(cb, asid, va);
                    const Translation* b = ref.lookup(cb, asid, va);
                    REQUIRE((a == nullptr) == (b == nullptr));
                    if (a) {
                        REQUIRE(a->pa_base == b->pa_base);
                        ++hits;
                    }
                } else if (op < 98) {
                    const std::uint64_t va = va_of(rng() % 4 == 0) + rng() % KiB4;
                    REQUIRE(tlb.invalidate_va(cb, asid, va) ==
                            ref.drop_if([&](const Translation& t) { return ScanTlb::matches(t, cb, asid, va); }));
                } else if (op < 99) {
                    REQUIRE(tlb.invalidate_asid(cb, asid) == ref.drop_if([&](const Translation& t) {
                        return t.cb == cb && !t.global && t.asid == asid;
                    }));
                } else {
                    REQUIRE(tlb.invalidate_all(cb) == ref.drop_if([&](const Translation& t) { return t.cb == cb; }));
                }
                REQUIRE(tlb.occupied() ==
                        static_cast<unsigned>(std::count_if(ref.slots.begin(), ref.slots.end(),
                                                            [](const ScanTlb::Slot& x) { return x.valid; })));
            }
            INFO("entries " << g.entries << ", ways " << ways);
            REQUIRE(hits > 1000);   // the stream exercised hits, not only misses
            REQUIRE(fills > 5000);
        }
}
