// Vm: address spaces, ARMv8 page tables in (fake) DRAM, demand paging with
// THP, protection, pins and RLIMIT_MEMLOCK, invalidation order, CPU costs.
// Plain objects: no elaboration, no sc_start.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "debug_memory.hpp"
#include "model_env.hpp"
#include "models/os/vm.hpp"
#include "models/smmu/translation.hpp"

using namespace vrdmasim;
using sc_core::sc_time;
namespace a64 = vrdmasim::aarch64;

namespace {

using vrdmasim_test::Settings;

sc_time us(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e6 + 0.5)); }
sc_time ns(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e3 + 0.5)); }
const sc_time T0 = sc_core::SC_ZERO_TIME;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

using FakeMemory = vrdmasim_test::DebugMemory;

const vrdmasim_test::ParamDecls kVmParams = {CpuCores::declare_params, Vm::declare_params, Ssd::declare_params};

ParamRegistry vm_params() { return vrdmasim_test::params_of(kVmParams); }

// Exact, simple costs so that sums are easy to check.
const Settings kCosts = {{"vm.minor-fault", "2us"},
                         {"vm.zero-fill-page", "1us"},
                         {"vm.huge-zero-fill", "500us"},
                         {"vm.syscall", "500ns"},
                         {"vm.pte-update", "20ns"},
                         {"vm.pin-call", "20us"},
                         {"vm.pin-page", "500ns"},
                         {"vm.user-access", "100ns"},
                         // second part: an idle SSD reads a page in 50 + 1 us, writes it in 20 + 1 us
                         {"vm.swap-out-page", "2us"},
                         {"vm.major-fault", "10us"},
                         {"vm.scan-pte", "10ns"},
                         {"vm.copy-page", "2us"},
                         {"ssd.read-latency", "50us"},
                         {"ssd.write-latency", "20us"},
                         {"ssd.bandwidth", "4.096GB/s"},
                         {"ssd.queue-depth", "32"}};

struct Env : vrdmasim_test::ModelEnv {
    FakeMemory mem;
    FrameAllocator frames;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<Ssd> ssd;
    int pid = 0;
    explicit Env(const Settings& settings = {}, std::uint64_t dram = 64 * MiB)
        : ModelEnv(kVmParams, kCosts, settings), frames(0, dram) {
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", mem, frames, *cpu);
        ssd = std::make_unique<Ssd>(ctx, "node0.ssd", "node0");
        pid = vm->create_process("app");
    }
    std::uint64_t counter(const std::string& n) const {
        const Counter* c = stats.find_counter("node0.vm." + n);
        return c ? c->value() : ~0ull;
    }
};

// An independent walker: the leaf descriptor for va under root (0 if none).
std::uint64_t walk(const FakeMemory& m, std::uint64_t root, std::uint64_t va, int& level, std::uint64_t& pa) {
    std::uint64_t table = root;
    for (int l = 0; l <= 3; ++l) {
        const std::uint64_t d = m.word(table + 8 * ((va >> (39 - 9 * l)) & 0x1ff));
        if (!(d & 1)) return 0;
        if (l == 3 || !(d & 2)) {
            level = l;
            const std::uint64_t size = 1ull << (39 - 9 * l);
            pa = (d & 0x0000fffffffff000ull & ~(size - 1)) | (va & (size - 1));
            return d;
        }
        table = d & 0x0000fffffffff000ull;
    }
    return 0;
}

// The SMMU's walker over the same memory.
WalkResult smmu_walk(Env& e, std::uint64_t va, bool write) {
    WalkCache cache(4);
    PageTableWalker w(
        [&e](std::uint64_t pa, std::uint64_t& v, sc_time at, bool& ok) {
            v = e.mem.word(pa);
            ok = true;
            return at;
        },
        cache);
    WalkRequest r;
    r.ttbr = e.vm->root(e.pid);
    r.asid = e.vm->asid(e.pid);
    r.t0sz = e.vm->t0sz();
    r.write = write;
    r.va = va;
    return w.walk(r, T0);
}

const sc_time kFault4k = us(2) + us(1) + ns(20);   // minor + zero-fill + pte
const sc_time kFault2m = us(2) + us(500) + ns(20);   // minor + huge-zero-fill + pte

}   // namespace

TEST_CASE("vm: parameters have defaults with sources", "[os][vm]") {
    ParamRegistry reg = vm_params();
    const ParamDecl* lim = reg.find("vm.memlock-limit");
    REQUIRE(lim);
    CHECK(lim->default_text == "8MiB");
    CHECK(lim->help.find("5.16") != std::string::npos);
    CHECK(lim->help.find("64 KiB") != std::string::npos);
    const ParamDecl* thp = reg.find("vm.thp");
    REQUIRE(thp);
    CHECK(thp->choices == std::vector<std::string>{"always", "madvise", "never"});
    for (const char* k : {"minor-fault", "zero-fill-page", "huge-zero-fill", "syscall", "pte-update", "pin-call",
                          "pin-page", "user-access"}) {
        const ParamDecl* d = reg.find(std::string("vm.") + k);
        REQUIRE(d);
        CHECK(d->help.find("*estimate*") != std::string::npos);
    }
    CHECK(reg.find("vm.minor-fault")->default_text == "2us");
}

TEST_CASE("vm: processes get pids from 1, ASID = pid, distinct roots", "[os][vm]") {
    Env e;
    const int p2 = e.vm->create_process("other");
    CHECK(e.pid == 1);
    CHECK(p2 == 2);
    CHECK(e.vm->asid(1) == 1);
    CHECK(e.vm->asid(2) == 2);
    CHECK(e.vm->root(1) != e.vm->root(2));
    CHECK(e.vm->root(1) % 4096 == 0);
    CHECK_THROWS_AS(e.vm->root(3), std::invalid_argument);
    CHECK(e.vm->mmap(3, 4096, Prot::ReadWrite, false, T0).error == VmError::Invalid);
}

TEST_CASE("vm: mmap places mappings top-down, aligned, never overlapping", "[os][vm]") {
    Env e;
    const auto a = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, false, T0);
    const auto b = e.vm->mmap(e.pid, 5000, Prot::ReadWrite, false, T0);
    const auto c = e.vm->mmap(e.pid, 2 * MiB, Prot::Read, false, T0);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(c.ok());
    CHECK(a.value == 0x7f0000000000ull - 4 * MiB);
    CHECK(b.value == a.value - 8192);   // 5000 rounded to two pages, just below
    CHECK(c.value == a.value - 4 * MiB);   // 2 MiB aligned, below b
    CHECK(c.value + 2 * MiB <= b.value);
    // A hole left by munmap is reused when it fits.
    REQUIRE(e.vm->munmap(e.pid, b.value, 8192, T0).ok());
    CHECK(e.vm->mmap(e.pid, 4096, Prot::ReadWrite, false, T0).value == a.value - 4096);
    CHECK(e.vm->mmap(e.pid, 0, Prot::ReadWrite, false, T0).error == VmError::Invalid);
    CHECK(e.counter("mmaps") == 4);
    // MAP_FIXED_NOREPLACE: a program's own address, above the top-down area
    // too (48 bits); EEXIST over any mapped page, EINVAL outside the range.
    const std::uint64_t own = 0x7ffff7a00000ull;
    const auto f = e.vm->mmap_fixed(e.pid, own, 3 * 4096, Prot::ReadWrite, false, T0);
    REQUIRE(f.ok());
    CHECK(f.value == own);
    CHECK(e.vm->mmap_fixed(e.pid, own + 2 * 4096, 4096, Prot::ReadWrite, false, T0).error == VmError::Exists);
    CHECK(e.vm->mmap_fixed(e.pid, own - 4096, 2 * 4096, Prot::ReadWrite, false, T0).error == VmError::Exists);
    CHECK(e.vm->mmap_fixed(e.pid, a.value, 4096, Prot::ReadWrite, false, T0).error == VmError::Exists);
    CHECK(e.vm->mmap_fixed(e.pid, own + 100, 4096, Prot::ReadWrite, false, T0).error == VmError::Invalid);
    CHECK(e.vm->mmap_fixed(e.pid, 4096, 4096, Prot::ReadWrite, false, T0).error == VmError::Invalid);
    CHECK(e.vm->mmap_fixed(e.pid, (1ull << 48) - 4096, 2 * 4096, Prot::ReadWrite, false, T0).error == VmError::Invalid);
    CHECK(e.vm->mmap_fixed(e.pid, own + 3 * 4096, 4096, Prot::ReadWrite, false, T0).ok());   // just after: fits
    // Not populated: the first touch faults, as any mapping's.
    CHECK(e.vm->touch(e.pid, own + 4096, true, T0).value == 1);
    CHECK(e.counter("mmaps") == 6);
}

TEST_CASE("vm: demand paging with 4 KiB pages writes tables both walkers read", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}});
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    const std::uint64_t va = m.value + 3 * 4096 + 123;
    CHECK_FALSE(e.vm->present(e.pid, va));
    const std::uint64_t free0 = e.vm->free_bytes();

    const auto t1 = e.vm->touch(e.pid, va, true, us(10));
    REQUIRE(t1.ok());
    CHECK(t1.value == 1);
    CHECK(t1.done == us(10) + kFault4k);
    CHECK(e.counter("faults_minor") == 1);
    CHECK(e.counter("faults_huge") == 0);
    // One data frame plus the level-1, -2, -3 tables.
    CHECK(free0 - e.vm->free_bytes() == 4 * 4096);

    const auto t2 = e.vm->touch(e.pid, va, false, us(20));
    REQUIRE(t2.ok());
    CHECK(t2.value == 0);
    CHECK(t2.done == us(20) + ns(100));
    CHECK(e.counter("faults_minor") == 1);

    std::uint64_t pa = 0;
    REQUIRE(e.vm->translate(e.pid, va, pa));
    CHECK(pa % 4096 == 123);
    CHECK(e.frames.contains(pa));
    int level = 0;
    std::uint64_t pa2 = 0;
    const std::uint64_t d = walk(e.mem, e.vm->root(e.pid), va, level, pa2);
    CHECK(level == 3);
    CHECK(pa2 == pa);
    CHECK((d & a64::kAf) != 0);
    CHECK((d & a64::kApReadOnly) == 0);
    CHECK((d & a64::kApUser) != 0);
    CHECK((d & a64::kNg) != 0);
    const WalkResult w = smmu_walk(e, va, true);
    CHECK(w.fault == FaultType::None);
    CHECK(w.t.pa_base + (va - w.t.va_base) == pa);
    CHECK(w.t.size == 4096);
    CHECK(w.t.writable);
    // The neighbour page is not present for anyone.
    CHECK_FALSE(e.vm->present(e.pid, va + 4096));
    CHECK(smmu_walk(e, va + 4096, false).fault == FaultType::Translation);
    CHECK(walk(e.mem, e.vm->root(e.pid), va + 4096, level, pa2) == 0);

    // Zero-filled, although the memory held 0xA5 before.
    std::vector<unsigned char> buf(4096, 1);
    REQUIRE(e.vm->read_user(e.pid, va & ~4095ull, buf.data(), 4096));
    CHECK(buf == std::vector<unsigned char>(4096, 0));
}

TEST_CASE("vm: THP always maps 2 MiB blocks on 2 MiB-aligned frames", "[os][vm]") {
    Env e(Settings{{"vm.thp", "always"}});
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    const std::uint64_t va = m.value + 2 * MiB + 5 * 4096 + 7;
    const auto t = e.vm->touch(e.pid, va, true, T0);
    REQUIRE(t.ok());
    CHECK(t.value == 512);
    CHECK(t.done == kFault2m);
    CHECK(e.counter("faults_huge") == 1);
    CHECK(e.counter("faults_minor") == 0);
    std::uint64_t pa = 0;
    REQUIRE(e.vm->translate(e.pid, va, pa));
    CHECK((pa - (va - m.value - 2 * MiB)) % (2 * MiB) == 0);
    int level = 0;
    std::uint64_t pa2 = 0;
    const std::uint64_t d = walk(e.mem, e.vm->root(e.pid), m.value + 2 * MiB + 2 * MiB - 1, level, pa2);
    CHECK(level == 2);
    CHECK((d & a64::kAf) != 0);
    CHECK(pa2 == pa - (5 * 4096 + 7) + 2 * MiB - 1);
    const WalkResult w = smmu_walk(e, va, true);
    CHECK(w.fault == FaultType::None);
    CHECK(w.t.size == 2 * MiB);
    CHECK(w.t.pa_base + (va - w.t.va_base) == pa);
    // The whole 2 MiB is present and zero (the memory held 0xA5).
    CHECK(e.vm->present(e.pid, m.value + 2 * MiB));
    CHECK_FALSE(e.vm->present(e.pid, m.value + 2 * MiB - 1));
    std::vector<unsigned char> buf(2 * MiB, 1);
    REQUIRE(e.vm->read_user(e.pid, m.value + 2 * MiB, buf.data(), buf.size()));
    CHECK(buf == std::vector<unsigned char>(2 * MiB, 0));
    // A second touch anywhere in the block is no fault.
    CHECK(e.vm->touch(e.pid, m.value + 2 * MiB + 100 * 4096, true, us(1000)).done == us(1000) + ns(100));
}

TEST_CASE("vm: THP needs the whole aligned range in the VMA and nothing mapped there", "[os][vm]") {
    Env e(Settings{{"vm.thp", "always"}});
    // 3 MiB mapping (2 MiB aligned): its second 2 MiB range sticks out of it.
    const auto odd = e.vm->mmap(e.pid, 3 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(odd.value % (2 * MiB) == 0);
    CHECK(e.vm->touch(e.pid, odd.value + 2 * MiB, true, T0).value == 1);
    CHECK(e.vm->touch(e.pid, odd.value, true, T0).value == 512);
    // 1 MiB mapping: no 2 MiB range fits.
    const auto small = e.vm->mmap(e.pid, 1 * MiB, Prot::ReadWrite, false, T0);
    CHECK(e.vm->touch(e.pid, small.value, true, T0).value == 1);
    // A page already mapped in the range forces 4 KiB.
    const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::NoHugePage, T0).ok());
    CHECK(e.vm->touch(e.pid, m.value, true, T0).value == 1);
    REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::HugePage, T0).ok());
    CHECK(e.vm->touch(e.pid, m.value + 4096, true, T0).value == 1);
    CHECK(e.counter("faults_huge") == 1);
    CHECK(e.counter("faults_minor") == 4);
    // After DontNeed empties the range, the next fault may map a block
    // (the empty page table is given back).
    REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::DontNeed, T0).ok());
    CHECK(e.vm->touch(e.pid, m.value + 8192, true, T0).value == 512);
}

TEST_CASE("vm: THP madvise and never", "[os][vm]") {
    SECTION("madvise: only MADV_HUGEPAGE areas get blocks") {
        Env e(Settings{{"vm.thp", "madvise"}});
        const auto a = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        const auto b = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        REQUIRE(e.vm->madvise(e.pid, b.value, 2 * MiB, Advice::HugePage, T0).ok());
        CHECK(e.vm->touch(e.pid, a.value, true, T0).value == 1);
        CHECK(e.vm->touch(e.pid, b.value, true, T0).value == 512);
    }
    SECTION("never: even MADV_HUGEPAGE gets 4 KiB") {
        Env e(Settings{{"vm.thp", "never"}});
        const auto b = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        REQUIRE(e.vm->madvise(e.pid, b.value, 2 * MiB, Advice::HugePage, T0).ok());
        CHECK(e.vm->touch(e.pid, b.value, true, T0).value == 1);
    }
}

TEST_CASE("vm: fragmentation forces 4 KiB pages when no 2 MiB frame is free", "[os][vm]") {
    Env e(Settings{{"vm.thp", "always"}}, 16 * MiB);
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, false, T0);
    // Hold one 4 KiB frame in every 2 MiB block.
    std::vector<std::uint64_t> held;
    while (e.frames.can_alloc(9)) {
        auto f = e.frames.alloc(9);
        REQUIRE(f);
        e.frames.split(*f, 9);
        for (unsigned o = 8; o >= 1; --o)
            for (std::uint64_t b = *f; b < *f + 2 * MiB; b += 4096ull << o) e.frames.split(b, o);
        for (std::uint64_t p = *f + 4096; p < *f + 2 * MiB; p += 4096) e.frames.free(p, 0);
        held.push_back(*f);
    }
    const auto t = e.vm->touch(e.pid, m.value, true, T0);
    REQUIRE(t.ok());
    CHECK(t.value == 1);
    CHECK(t.done == kFault4k);
    CHECK(e.counter("faults_huge") == 0);
    // Give one block back: the next 2 MiB range gets a block.
    e.frames.free(held.back(), 0);
    CHECK(e.vm->touch(e.pid, m.value + 2 * MiB, true, T0).value == 512);
}

TEST_CASE("vm: data survives, munmap of part of a huge page keeps the rest", "[os][vm]") {
    Env e(Settings{{"vm.thp", "always"}});
    const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
    std::vector<unsigned char> data(2 * MiB);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7 + i / 4096);
    REQUIRE(e.vm->write_user(e.pid, m.value, data.data(), data.size()));
    CHECK(e.counter("faults_huge") == 1);
    std::uint64_t pa_block = 0;
    REQUIRE(e.vm->translate(e.pid, m.value, pa_block));
    const std::uint64_t free0 = e.vm->free_bytes();

    // Unmap pages 10..19 of the block.
    const auto u = e.vm->munmap(e.pid, m.value + 10 * 4096, 10 * 4096, T0);
    REQUIRE(u.ok());
    CHECK(e.counter("huge_splits") == 1);
    CHECK(e.vm->free_bytes() == free0 + 10 * 4096 - 4096);   // ten pages back, one page-table frame taken
    CHECK_FALSE(e.vm->present(e.pid, m.value + 10 * 4096));
    CHECK_FALSE(e.vm->present(e.pid, m.value + 20 * 4096 - 1));
    std::uint64_t pa = 0;
    REQUIRE(e.vm->translate(e.pid, m.value + 20 * 4096, pa));
    CHECK(pa == pa_block + 20 * 4096);   // same frames
    int level = 0;
    std::uint64_t pa2 = 0;
    CHECK(walk(e.mem, e.vm->root(e.pid), m.value + 511 * 4096, level, pa2) != 0);
    CHECK(level == 3);
    CHECK(pa2 == pa_block + 511 * 4096);
    std::vector<unsigned char> back(2 * MiB - 20 * 4096);
    REQUIRE(e.vm->read_user(e.pid, m.value + 20 * 4096, back.data(), back.size()));
    CHECK(std::equal(back.begin(), back.end(), data.begin() + 20 * 4096));
    std::vector<unsigned char> head(10 * 4096);
    REQUIRE(e.vm->read_user(e.pid, m.value, head.data(), head.size()));
    CHECK(std::equal(head.begin(), head.end(), data.begin()));
    // The hole is no longer mapped at all.
    unsigned char x = 0;
    CHECK_FALSE(e.vm->read_user(e.pid, m.value + 12 * 4096, &x, 1));
    CHECK(e.vm->touch(e.pid, m.value + 12 * 4096, false, T0).error == VmError::Fault);
    // Unmapping the rest gives every data frame back (the split block's pages).
    REQUIRE(e.vm->munmap(e.pid, m.value, 2 * MiB, T0).ok());
    CHECK(e.vm->free_bytes() == free0 + 2 * MiB - 4096);
}

TEST_CASE("vm: read-only mappings and mprotect", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}});
    const auto ro = e.vm->mmap(e.pid, 8192, Prot::Read, false, T0);
    REQUIRE(e.vm->touch(e.pid, ro.value, false, T0).ok());
    std::uint64_t slot_pa = 0;
    int level = 0;
    CHECK((walk(e.mem, e.vm->root(e.pid), ro.value, level, slot_pa) & a64::kApReadOnly) != 0);
    CHECK(e.vm->touch(e.pid, ro.value, true, T0).error == VmError::Access);
    CHECK(e.vm->touch(e.pid, ro.value + 4096, true, T0).error == VmError::Access);
    CHECK(smmu_walk(e, ro.value, true).fault == FaultType::Permission);

    const auto m = e.vm->mmap(e.pid, 4 * 4096, Prot::ReadWrite, false, T0);
    const unsigned char msg[] = "hello";
    REQUIRE(e.vm->write_user(e.pid, m.value + 4096, msg, 6));
    std::vector<std::pair<std::uint64_t, std::uint64_t>> inval;
    e.vm->set_invalidate([&](int, std::uint16_t, std::uint64_t va, std::uint64_t len, sc_time at) {
        inval.emplace_back(va, len);
        return at + us(3);
    });
    const auto p = e.vm->mprotect(e.pid, m.value, 4 * 4096, Prot::Read, us(100));
    REQUIRE(p.ok());
    // syscall + one present PTE changed, then the invalidation.
    CHECK(p.done == us(100) + ns(500) + ns(20) + us(3));
    REQUIRE(inval.size() == 1);
    CHECK(inval[0] == std::make_pair(m.value, std::uint64_t{4 * 4096}));
    CHECK((walk(e.mem, e.vm->root(e.pid), m.value + 4096, level, slot_pa) & a64::kApReadOnly) != 0);
    CHECK(e.vm->touch(e.pid, m.value + 4096, true, T0).error == VmError::Access);
    CHECK(e.vm->touch(e.pid, m.value + 4096, false, T0).ok());
    CHECK_FALSE(e.vm->write_user(e.pid, m.value + 4096, msg, 1));

    // PROT_NONE: nothing translates, the data is kept for a later mprotect.
    REQUIRE(e.vm->mprotect(e.pid, m.value, 4 * 4096, Prot::None, T0).ok());
    CHECK_FALSE(e.vm->present(e.pid, m.value + 4096));
    CHECK(smmu_walk(e, m.value + 4096, false).fault == FaultType::Translation);
    CHECK(e.vm->touch(e.pid, m.value + 4096, false, T0).error == VmError::Access);
    REQUIRE(e.vm->mprotect(e.pid, m.value, 4 * 4096, Prot::ReadWrite, T0).ok());
    unsigned char back[6] = {};
    REQUIRE(e.vm->read_user(e.pid, m.value + 4096, back, 6));
    CHECK(std::string(reinterpret_cast<char*>(back)) == "hello");
    CHECK(e.vm->touch(e.pid, m.value + 4096, true, T0).ok());
    CHECK((walk(e.mem, e.vm->root(e.pid), m.value + 4096, level, slot_pa) & a64::kApReadOnly) == 0);
    // A hole in the range: ENOMEM and nothing changed.
    CHECK(e.vm->mprotect(e.pid, m.value, 1 * MiB, Prot::Read, T0).error == VmError::NoMemory);
    CHECK(e.vm->touch(e.pid, m.value + 4096, true, T0).ok());
}

TEST_CASE("vm: mprotect of part of a huge page splits it", "[os][vm]") {
    Env e(Settings{{"vm.thp", "always"}});
    const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(e.vm->touch(e.pid, m.value, true, T0).value == 512);
    std::uint64_t pa0 = 0;
    REQUIRE(e.vm->translate(e.pid, m.value, pa0));
    REQUIRE(e.vm->mprotect(e.pid, m.value + 4096, 4096, Prot::Read, T0).ok());
    CHECK(e.vm->touch(e.pid, m.value + 4096, true, T0).error == VmError::Access);
    CHECK(e.vm->touch(e.pid, m.value, true, T0).ok());
    CHECK(e.vm->touch(e.pid, m.value + 8192, true, T0).ok());
    std::uint64_t pa = 0;
    REQUIRE(e.vm->translate(e.pid, m.value + 8192, pa));
    CHECK(pa == pa0 + 8192);
    CHECK(smmu_walk(e, m.value + 4096, true).fault == FaultType::Permission);
    CHECK(smmu_walk(e, m.value + 8192, true).t.size == 4096);
}

TEST_CASE("vm: munmap invalidates before the frames are freed", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}});
    const auto m = e.vm->mmap(e.pid, 8 * 4096, Prot::ReadWrite, false, T0);
    REQUIRE(e.vm->fault_in(e.pid, m.value, 8 * 4096, true, T0).value == 8);
    const std::uint64_t free_before = e.vm->free_bytes();
    struct Call {
        int pid;
        std::uint16_t asid;
        std::uint64_t va, len, free_at_call;
        sc_time at;
    };
    std::vector<Call> calls;
    e.vm->set_invalidate([&](int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_time at) {
        calls.push_back({pid, asid, va, len, e.vm->free_bytes(), at});
        return at + us(5);
    });
    const auto u = e.vm->munmap(e.pid, m.value + 4096, 3 * 4096, us(50));
    REQUIRE(u.ok());
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].pid == e.pid);
    CHECK(calls[0].asid == e.vm->asid(e.pid));
    CHECK(calls[0].va == m.value + 4096);
    CHECK(calls[0].len == 3 * 4096);
    CHECK(calls[0].free_at_call == free_before);   // nothing freed yet
    CHECK(calls[0].at == us(50) + ns(500) + ns(60));
    CHECK(u.done == us(50) + ns(500) + ns(60) + us(5));
    CHECK(e.vm->free_bytes() == free_before + 3 * 4096);
    CHECK(e.counter("invalidations") == 1);
    CHECK(e.vm->present(e.pid, m.value));
    CHECK_FALSE(e.vm->present(e.pid, m.value + 4096));
    CHECK(e.vm->present(e.pid, m.value + 4 * 4096));
}

TEST_CASE("vm: several MMU notifiers are called in order, chained", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}});
    const auto m = e.vm->mmap(e.pid, 4 * 4096, Prot::ReadWrite, false, T0);
    REQUIRE(e.vm->fault_in(e.pid, m.value, 4 * 4096, true, T0).value == 4);
    std::vector<std::pair<char, sc_time>> calls;
    // Added before set_invalidate: still called after the first (the driver's slot).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    e.vm->add_invalidate([&](int pid, std::uint16_t, std::uint64_t va, std::uint64_t len, sc_time at) {
        CHECK(pid == e.pid);
        ranges.emplace_back(va, len);
        calls.emplace_back('b', at);
        return at + us(7);
    });
    e.vm->set_invalidate([&](int, std::uint16_t, std::uint64_t, std::uint64_t, sc_time at) {
        calls.emplace_back('a', at);
        return at + us(5);
    });
    e.vm->add_invalidate([&](int, std::uint16_t, std::uint64_t, std::uint64_t, sc_time at) {
        calls.emplace_back('c', at);
        return at;   // takes no time: must not move done backwards
    });
    const auto u = e.vm->munmap(e.pid, m.value, 2 * 4096, us(10));
    REQUIRE(u.ok());
    const sc_time t0 = us(10) + ns(500) + ns(40);   // syscall + 2 PTEs cleared
    REQUIRE(calls.size() == 3);
    CHECK(calls[0] == std::make_pair('a', t0));
    CHECK(calls[1] == std::make_pair('b', t0 + us(5)));
    CHECK(calls[2] == std::make_pair('c', t0 + us(12)));
    CHECK(u.done == t0 + us(12));
    CHECK(e.counter("invalidations") == 1);   // one mapping change, however many notifiers
    REQUIRE(ranges.size() == 1);
    CHECK(ranges[0].first == m.value);
    CHECK(ranges[0].second == 2 * 4096);
    // set_invalidate replaces the first notifier only.
    calls.clear();
    e.vm->set_invalidate([&](int, std::uint16_t, std::uint64_t, std::uint64_t, sc_time at) {
        calls.emplace_back('A', at);
        return at + us(1);
    });
    const auto u2 = e.vm->munmap(e.pid, m.value + 2 * 4096, 4096, us(100));
    REQUIRE(calls.size() == 3);
    CHECK(calls[0].first == 'A');
    CHECK(calls[1].first == 'b');
    CHECK(calls[2].first == 'c');
    CHECK(u2.done == us(100) + ns(520) + us(8));
}

TEST_CASE("vm: pins count against RLIMIT_MEMLOCK exactly", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}, {"vm.memlock-limit", "64KiB"}});
    const auto m = e.vm->mmap(e.pid, 1 * MiB, Prot::ReadWrite, false, T0);
    const auto p1 = e.vm->pin(e.pid, m.value, 12 * 4096, us(1));
    REQUIRE(p1.ok());
    CHECK(p1.value == 12);
    // pin-call + 12 faults + 12 pin-page
    CHECK(p1.done == us(1) + us(20) + kFault4k * 12.0 + ns(500) * 12.0);
    CHECK(e.vm->pinned_bytes(e.pid) == 12 * 4096);
    CHECK(e.vm->pin_count(e.pid, m.value + 4096) == 1);
    // 12 + 5 pages > 16: refused, nothing pinned or faulted.
    const auto over = e.vm->pin(e.pid, m.value + 12 * 4096, 5 * 4096, T0);
    CHECK(over.error == VmError::MemlockLimit);
    CHECK(e.vm->pinned_bytes(e.pid) == 12 * 4096);
    CHECK(e.vm->pin_count(e.pid, m.value + 12 * 4096) == 0);
    CHECK_FALSE(e.vm->present(e.pid, m.value + 12 * 4096));
    CHECK(e.counter("memlock_refusals") == 1);
    // Exactly at the limit: 12 + 4 = 16 pages.
    REQUIRE(e.vm->pin(e.pid, m.value + 12 * 4096, 4 * 4096, T0).ok());
    CHECK(e.vm->pinned_bytes(e.pid) == 64 * 1024);
    // mlock shares the limit.
    CHECK(e.vm->mlock(e.pid, m.value + 32 * 4096, 4096, T0).error == VmError::MemlockLimit);
    // A page pinned twice counts twice; unpin gives it back.
    REQUIRE(e.vm->unpin(e.pid, m.value, 4096, T0).ok());
    CHECK(e.vm->pin_count(e.pid, m.value) == 0);
    REQUIRE(e.vm->pin(e.pid, m.value + 4096, 4096, T0).ok());
    CHECK(e.vm->pin_count(e.pid, m.value + 4096) == 2);
    CHECK(e.vm->pinned_bytes(e.pid) == 64 * 1024);
    CHECK(e.vm->unpin(e.pid, m.value, 4096, T0).error == VmError::Invalid);   // not pinned
    CHECK(e.counter("pages_pinned") == 17);
    // A pin outside any mapping: ENOMEM; read-only: EACCES.
    CHECK(e.vm->pin(e.pid, 0x1000, 4096, T0).error == VmError::NoMemory);
}

TEST_CASE("vm: mlock faults in and counts against the limit", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}, {"vm.memlock-limit", "64KiB"}});
    const auto m = e.vm->mmap(e.pid, 1 * MiB, Prot::ReadWrite, false, T0);
    const auto l = e.vm->mlock(e.pid, m.value, 16 * 4096, T0);
    REQUIRE(l.ok());
    CHECK(l.value == 16);
    CHECK(l.done == ns(500) + kFault4k * 16.0);
    CHECK(e.vm->present(e.pid, m.value + 15 * 4096));
    CHECK(e.vm->mlock(e.pid, m.value, 16 * 4096, T0).ok());   // already locked: no new charge
    CHECK(e.vm->mlock(e.pid, m.value + 16 * 4096, 4096, T0).error == VmError::MemlockLimit);
    CHECK(e.vm->pin(e.pid, m.value, 4096, T0).error == VmError::MemlockLimit);
    CHECK(e.vm->madvise(e.pid, m.value, 4096, Advice::DontNeed, T0).error == VmError::Invalid);
    REQUIRE(e.vm->munlock(e.pid, m.value, 8 * 4096, T0).ok());
    CHECK(e.vm->mlock(e.pid, m.value + 16 * 4096, 8 * 4096, T0).ok());
}

TEST_CASE("vm: a pinned frame outlives munmap until its last unpin", "[os][vm]") {
    Env e(Settings{{"vm.thp", "always"}});
    const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
    const unsigned char msg[] = "pinned";
    REQUIRE(e.vm->write_user(e.pid, m.value + 3 * 4096, msg, 7));
    REQUIRE(e.vm->pin(e.pid, m.value + 3 * 4096, 4096, T0).ok());
    REQUIRE(e.vm->pin(e.pid, m.value + 3 * 4096, 4096, T0).ok());
    std::uint64_t pa = 0;
    REQUIRE(e.vm->translate(e.pid, m.value + 3 * 4096, pa));
    const std::uint64_t free0 = e.vm->free_bytes();
    REQUIRE(e.vm->munmap(e.pid, m.value, 2 * MiB, T0).ok());
    // All of the block but the pinned page is back.
    CHECK(e.vm->free_bytes() == free0 + 2 * MiB - 4096);
    CHECK_FALSE(e.vm->present(e.pid, m.value + 3 * 4096));
    CHECK(e.vm->pin_count(e.pid, m.value + 3 * 4096) == 2);
    CHECK(e.vm->pinned_bytes(e.pid) == 2 * 4096);
    CHECK(e.mem.byte(pa) == 'p');   // the device may still DMA into it
    REQUIRE(e.vm->unpin(e.pid, m.value + 3 * 4096, 4096, T0).ok());
    CHECK(e.vm->free_bytes() == free0 + 2 * MiB - 4096);
    REQUIRE(e.vm->unpin(e.pid, m.value + 3 * 4096, 4096, T0).ok());
    CHECK(e.vm->free_bytes() == free0 + 2 * MiB);
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
    CHECK(e.frames.can_alloc(9));
}

TEST_CASE("vm: MADV_DONTNEED drops pages, the next touch zero-fills again", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}});
    const auto m = e.vm->mmap(e.pid, 4 * 4096, Prot::ReadWrite, false, T0);
    const std::vector<unsigned char> ones(4 * 4096, 0xff);
    REQUIRE(e.vm->write_user(e.pid, m.value, ones.data(), ones.size()));
    CHECK(e.counter("faults_minor") == 4);
    int calls = 0;
    e.vm->set_invalidate([&](int, std::uint16_t, std::uint64_t, std::uint64_t, sc_time at) {
        ++calls;
        return at;
    });
    const std::uint64_t free0 = e.vm->free_bytes();
    REQUIRE(e.vm->madvise(e.pid, m.value, 4 * 4096, Advice::DontNeed, T0).ok());
    CHECK(calls == 1);
    CHECK(e.vm->free_bytes() == free0 + 4 * 4096);
    CHECK_FALSE(e.vm->present(e.pid, m.value));
    const auto t = e.vm->touch(e.pid, m.value + 4096, false, T0);
    CHECK(t.value == 1);
    std::vector<unsigned char> back(4 * 4096, 1);
    REQUIRE(e.vm->read_user(e.pid, m.value, back.data(), back.size()));
    CHECK(back == std::vector<unsigned char>(4 * 4096, 0));
    CHECK(e.counter("faults_minor") == 8);
}

TEST_CASE("vm: costs are sums of the configured costs, contention on 4 cores", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}});
    const auto m = e.vm->mmap(e.pid, 64 * 4096, Prot::ReadWrite, true, us(1));
    REQUIRE(m.ok());
    CHECK(m.done == us(1) + ns(500) + kFault4k * 64.0);
    const auto p = e.vm->madvise(e.pid, m.value, 64 * 4096, Advice::PopulateWrite, us(1000));
    CHECK(p.value == 0);
    CHECK(p.done == us(1000) + ns(500) + ns(100) * 64.0);   // every page present: one access each

    const auto b = e.vm->mmap(e.pid, 8 * 4096, Prot::ReadWrite, false, us(2000));
    const sc_time at = us(3000);
    std::vector<VmResult> r;
    for (int k = 0; k < 5; ++k) r.push_back(e.vm->touch(e.pid, b.value + k * 4096ull, true, at));
    for (int k = 0; k < 4; ++k) CHECK(r[k].done == at + kFault4k);
    CHECK(r[4].done == at + kFault4k * 2.0);   // the 5th waited for a core
    CHECK(e.vm->touch(e.pid, 0x1000, false, at).error == VmError::Fault);
    CHECK(e.cpu->busy("page-fault") == kFault4k * 5.0);
    const Histogram* h = e.stats.find_histogram("node0.vm.fault_time");
    REQUIRE(h);
    CHECK(h->count() == 5);
}

// ================================================================ second part:
// reclaim and swap, khugepaged, compaction.

namespace {

struct InvRec {
    int pid;
    std::uint16_t asid;
    std::uint64_t va, len;
    sc_time at;
    std::uint64_t free_pages;   // the allocator's free pages when the notifier ran
};

// Records every notifier call; returns at once.
void record_invalidations(Env& e, std::vector<InvRec>& v) {
    e.vm->set_invalidate([&e, &v](int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_time at) {
        v.push_back({pid, asid, va, len, at, e.frames.free_pages()});
        return at;
    });
}

std::vector<unsigned char> pattern(std::uint64_t seed) {
    std::vector<unsigned char> p(4096);
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = static_cast<unsigned char>((seed * 131 + i * 7 + (i >> 8)) & 0xff);
    return p;
}

std::vector<unsigned char> read_page(Env& e, std::uint64_t va) {
    std::vector<unsigned char> p(4096);
    REQUIRE(e.vm->read_user(e.pid, va, p.data(), p.size()));
    return p;
}

void write_page(Env& e, std::uint64_t va, std::uint64_t seed) {
    const auto p = pattern(seed);
    REQUIRE(e.vm->write_user(e.pid, va, p.data(), p.size()));
}

constexpr std::uint64_t P = 4096;

}   // namespace

TEST_CASE("vm: reclaim, khugepaged and compaction parameters have sources", "[os][vm][reclaim]") {
    ParamRegistry reg = vm_params();
    CHECK(reg.find("khugepaged.pages-to-scan")->default_text == "4096");
    CHECK(reg.find("khugepaged.max-ptes-none")->default_text == "511");
    CHECK(reg.find("khugepaged.max-ptes-swap")->default_text == "64");
    CHECK(reg.find("khugepaged.scan-sleep")->help.find("10000") != std::string::npos);
    CHECK(reg.find("khugepaged.alloc-sleep")->help.find("60000") != std::string::npos);
    for (const char* k : {"pages-to-scan", "scan-sleep", "alloc-sleep", "max-ptes-none", "max-ptes-swap"})
        CHECK(reg.find(std::string("khugepaged.") + k)->help.find("mm/khugepaged.c") != std::string::npos);
    CHECK(reg.find("vm.pins-block-thp-collapse")->default_text == "true");
    CHECK(reg.find("vm.direct-reclaim-pages")->help.find("SWAP_CLUSTER_MAX") != std::string::npos);
    for (const char* k : {"low-watermark", "high-watermark", "swap-out-page", "major-fault", "scan-pte", "copy-page",
                          "kswapd-interval", "compact-interval", "compact-pages"})
        CHECK(reg.find(std::string("vm.") + k)->help.find("*estimate*") != std::string::npos);
    CHECK(reg.find("vm.compact-interval")->default_text == "0s");   // off
    Env e;
    CHECK(e.vm->low_watermark() == 20 * MiB);
    CHECK(e.vm->high_watermark() == 24 * MiB);
    CHECK_THROWS_AS(Env(Settings{{"vm.low-watermark", "8MiB"}, {"vm.high-watermark", "4MiB"}}), ConfigError);
}

TEST_CASE("vm: without a swap device reclaim evicts nothing", "[os][vm][reclaim]") {
    Env e(Settings{{"vm.thp", "never"}});
    const auto m = e.vm->mmap(e.pid, 16 * P, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    const auto r = e.vm->reclaim(e.vm->free_bytes() + 4 * P, T0);
    CHECK(r.error == VmError::NoMemory);
    CHECK(r.value == 0);
    for (unsigned i = 0; i < 16; ++i) CHECK(e.vm->present(e.pid, m.value + i * P));
    CHECK(e.counter("swap_outs") == 0);
}

TEST_CASE("vm: a pin never holds a swapped-out page: short of frames it fails and pins nothing", "[os][vm][reclaim]") {
    // 4 MiB of frames (page tables included), swap behind them: a 3 MiB pin
    // faults its pages in while reclaim takes back the first of them; each
    // must be resident when pinned. A 6 MiB pin cannot be held at all: ENOMEM,
    // nothing left pinned.
    Env e(Settings{{"vm.thp", "never"}, {"vm.memlock-limit", "64MiB"}}, 4 * MiB);
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 16 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    // Fill most of memory first, so that the pin must reclaim as it goes.
    for (std::uint64_t a = 8 * MiB; a < 11 * MiB; a += P) write_page(e, m.value + a, static_cast<unsigned>(a / P));
    const auto p1 = e.vm->pin(e.pid, m.value, 3 * MiB, T0);
    REQUIRE(p1.ok());
    CHECK(e.vm->pinned_bytes(e.pid) == 3 * MiB);
    e.vm->complete_io(p1.done);   // pages reclaim took meanwhile come back by the pin's end
    for (std::uint64_t a = 0; a < 3 * MiB; a += P) {
        INFO("page " << a / P);
        CHECK(e.vm->present(e.pid, m.value + a));
    }
    REQUIRE(e.vm->unpin(e.pid, m.value, 3 * MiB, T0).ok());
    const auto p2 = e.vm->pin(e.pid, m.value + 4 * MiB, 6 * MiB, T0);
    CHECK_FALSE(p2.ok());
    CHECK(p2.error == VmError::NoMemory);
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
    CHECK(e.vm->pin_count(e.pid, m.value + 4 * MiB) == 0);
}

TEST_CASE("vm: reclaim evicts only unpinned, unlocked pages, data survives swap byte for byte", "[os][vm][reclaim]") {
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    std::vector<InvRec> inv;
    record_invalidations(e, inv);
    const auto a = e.vm->mmap(e.pid, 8 * P, Prot::ReadWrite, false, T0);
    const auto b = e.vm->mmap(e.pid, 4 * P, Prot::ReadWrite, false, T0);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    for (unsigned i = 0; i < 8; ++i) write_page(e, a.value + i * P, i);
    REQUIRE(e.vm->mlock(e.pid, b.value, 4 * P, T0).ok());
    REQUIRE(e.vm->pin(e.pid, a.value, 2 * P, T0).ok());
    inv.clear();
    const std::uint64_t free0 = e.frames.free_pages(), slots0 = e.ssd->free_slots();

    const auto r = e.vm->reclaim((free0 + 6) * P, us(100));
    CHECK(r.ok());
    CHECK(r.value == 6);
    CHECK(e.counter("swap_outs") == 6);
    CHECK(e.counter("reclaim_scans") == 1);
    CHECK(e.counter("pages_scanned") == 16);   // 8 + 8: first sweep clears AF, second evicts
    for (unsigned i = 0; i < 2; ++i) CHECK(e.vm->present(e.pid, a.value + i * P));   // pinned
    for (unsigned i = 2; i < 8; ++i) {
        CHECK_FALSE(e.vm->present(e.pid, a.value + i * P));
        CHECK(e.vm->swapped(e.pid, a.value + i * P));
    }
    for (unsigned i = 0; i < 4; ++i) CHECK(e.vm->present(e.pid, b.value + i * P));   // mlocked
    CHECK(e.frames.free_pages() == free0 + 6);
    CHECK(e.ssd->free_slots() == slots0 - 6);
    // CPU: 16 PTEs scanned, 6 AF cleared, 6 pages swapped out; then 6 SSD
    // writes issued together: 20 us latency, 1 us each on the shared channel.
    const sc_time cpu_end = us(100) + ns(16 * 10 + 6 * 20) + 6 * (us(2) + ns(20));
    CHECK(r.done == cpu_end + us(20) + us(6));
    // The notifier: the AF clears (a PTE update), then the evictions, each
    // coalesced to one range, before any frame was freed.
    REQUIRE(inv.size() == 2);
    for (const auto& i : inv) {
        CHECK(i.pid == e.pid);
        CHECK(i.asid == e.vm->asid(e.pid));
        CHECK(i.va == a.value + 2 * P);
        CHECK(i.len == 6 * P);
        CHECK(i.at == cpu_end);
        CHECK(i.free_pages == free0);
    }
    // A swap entry is not a translation for the SMMU either (nor is it PROT_NONE).
    CHECK(smmu_walk(e, a.value + 3 * P, false).fault == FaultType::Translation);
    int level = 0;
    std::uint64_t pa = 0;
    CHECK(walk(e.mem, e.vm->root(e.pid), a.value + 3 * P, level, pa) == 0);
    CHECK(e.vm->mprotect(e.pid, a.value, 8 * P, Prot::Read, T0).ok());   // swap entries keep their slot
    CHECK(e.vm->swapped(e.pid, a.value + 3 * P));
    REQUIRE(e.vm->mprotect(e.pid, a.value, 8 * P, Prot::ReadWrite, T0).ok());
    // Nothing else can go: the target cannot be reached.
    const auto r2 = e.vm->reclaim((e.frames.free_pages() + 1) * P, us(1000));
    CHECK(r2.error == VmError::NoMemory);
    CHECK(r2.value == 0);
    // Read back: byte for byte, each a major fault; slots free again.
    for (unsigned i = 0; i < 8; ++i) CHECK(read_page(e, a.value + i * P) == pattern(i));
    CHECK(e.counter("swap_ins") == 6);
    CHECK(e.counter("faults_major") == 6);
    CHECK(e.ssd->free_slots() == slots0);
    for (unsigned i = 2; i < 8; ++i) CHECK_FALSE(e.vm->swapped(e.pid, a.value + i * P));
}

TEST_CASE("vm: reclaim is LRU by access-flag second chance", "[os][vm][reclaim]") {
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 4 * P, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    auto page = [&](unsigned i) { return m.value + i * P; };
    // All four referenced: one sweep clears every AF, the second evicts page 0.
    const auto r1 = e.vm->reclaim(e.vm->free_bytes() + P, T0);
    CHECK(r1.value == 1);
    CHECK(e.counter("pages_scanned") == 5);
    CHECK(r1.done == ns(5 * 10 + 4 * 20) + us(2) + ns(20) + us(21));
    CHECK(e.vm->swapped(e.pid, page(0)));
    // Page 1 is used again (an access-flag fault sets AF): it gets a second
    // chance, page 2 (not used since) goes.
    const auto t = e.vm->touch(e.pid, page(1), false, us(100));
    CHECK(t.done == us(100) + us(2) + ns(20));
    CHECK(e.counter("faults_af") == 1);
    CHECK(e.vm->reclaim(e.vm->free_bytes() + P, us(200)).value == 1);
    CHECK(e.vm->swapped(e.pid, page(2)));
    CHECK(e.vm->present(e.pid, page(1)));
    CHECK(e.vm->present(e.pid, page(3)));
    // The hand moved on: page 3 (AF clear) before page 1 (AF cleared again).
    CHECK(e.vm->reclaim(e.vm->free_bytes() + P, us(300)).value == 1);
    CHECK(e.vm->swapped(e.pid, page(3)));
    CHECK(e.vm->present(e.pid, page(1)));
}

TEST_CASE("vm: a major fault costs the SSD read plus major-fault", "[os][vm][reclaim]") {
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, P, Prot::ReadWrite, false, T0);
    write_page(e, m.value, 42);
    const std::uint64_t slots0 = e.ssd->free_slots();
    REQUIRE(e.vm->reclaim(e.vm->free_bytes() + P, T0).value == 1);
    CHECK(e.ssd->free_slots() == slots0 - 1);
    const auto r = e.vm->touch(e.pid, m.value, false, us(1000));
    CHECK(r.ok());
    CHECK(r.value == 1);
    CHECK(r.done == us(1000) + us(10) + ns(20) + us(50) + us(1));   // major-fault + pte + SSD read
    CHECK(e.counter("faults_major") == 1);
    CHECK(e.counter("swap_ins") == 1);
    CHECK(e.ssd->free_slots() == slots0 - 1);   // read until 1051 us, mapped then (README "Reads in flight")
    e.vm->complete_io(r.done);
    CHECK(e.ssd->free_slots() == slots0);
    CHECK(read_page(e, m.value) == pattern(42));
    std::uint64_t pa = 0;
    int level = 0;
    CHECK(walk(e.mem, e.vm->root(e.pid), m.value, level, pa) != 0);   // a valid PTE again
}

TEST_CASE("vm: a swapped-in page is mapped when its SSD read completes, not at the fault", "[os][vm][reclaim][io]") {
    // do_swap_page maps a page once it is uptodate: until the read is done,
    // the SMMU's walker (and every other reader of the tables) finds the
    // swap entry; a second fault on the page waits for the same read.
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, P, Prot::ReadWrite, false, T0);
    write_page(e, m.value, 7);
    const std::uint64_t slots0 = e.ssd->free_slots();
    REQUIRE(e.vm->reclaim(e.vm->free_bytes() + P, T0).value == 1);
    const std::uint64_t free_frames = e.frames.free_pages();
    const auto r = e.vm->touch(e.pid, m.value, false, us(1000));
    REQUIRE(r.ok());
    CHECK(r.done == us(1000) + us(51) + us(10) + ns(20));   // the read ends at 1051 us, then major-fault + pte
    const sc_time io_done = us(1051);
    CHECK(e.vm->next_io() == io_done);
    // In the window: no translation for anyone, the frame taken, the slot still read.
    CHECK(smmu_walk(e, m.value, false).fault == FaultType::Translation);
    CHECK_FALSE(e.vm->present(e.pid, m.value));
    CHECK(e.vm->swapped(e.pid, m.value));
    CHECK(e.frames.free_pages() == free_frames - 1);
    CHECK(e.ssd->free_slots() == slots0 - 1);
    unsigned char b[8];
    REQUIRE(e.vm->peek_user(e.pid, m.value, b, sizeof b));   // the bytes the page will show
    CHECK(b[0] == pattern(7)[0]);
    // A second fault at 1020 us waits for the same read: no second read, no
    // second frame; it wakes at 1051 us and finds the page (minor-fault).
    const auto r2 = e.vm->touch(e.pid, m.value, true, us(1020));
    REQUIRE(r2.ok());
    CHECK(r2.done == us(1020) + us(2) + us(31));
    CHECK(e.counter("swap_ins") == 1);
    CHECK(e.counter("io_waits") == 1);
    CHECK(e.frames.free_pages() == free_frames - 1);
    CHECK(smmu_walk(e, m.value, false).fault == FaultType::Translation);   // still before 1051 us
    // Completion: one picosecond early changes nothing; at 1051 us the PTE is written.
    CHECK(e.vm->complete_io(io_done - sc_time::from_value(1)) == io_done);
    CHECK_FALSE(e.vm->present(e.pid, m.value));
    CHECK(e.vm->complete_io(io_done) == sc_core::sc_max_time());
    const WalkResult w = smmu_walk(e, m.value, false);
    CHECK(w.fault == FaultType::None);
    CHECK(e.vm->present(e.pid, m.value));
    CHECK_FALSE(e.vm->swapped(e.pid, m.value));
    CHECK(e.ssd->free_slots() == slots0);
    CHECK(read_page(e, m.value) == pattern(7));
    CHECK(e.counter("pages_mapped") >= 2);
}

TEST_CASE("vm: a read in flight zapped by munmap maps nothing, its frame and slot go at completion",
          "[os][vm][reclaim][io]") {
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 2 * P, Prot::ReadWrite, false, T0);
    write_page(e, m.value, 1);
    write_page(e, m.value + P, 2);
    REQUIRE(e.vm->reclaim(e.vm->free_bytes() + 2 * P, T0).value == 2);
    const std::uint64_t slots = e.ssd->free_slots(), frames = e.frames.free_pages();
    REQUIRE(e.vm->touch(e.pid, m.value, false, us(1000)).ok());
    // Pinning waits for the read and pins the frame the page will have.
    const auto pin = e.vm->pin(e.pid, m.value + P, P, us(1000));
    REQUIRE(pin.ok());
    CHECK(pin.done > us(1051));
    CHECK_FALSE(e.vm->present(e.pid, m.value + P));
    CHECK(e.vm->munmap(e.pid, m.value, 2 * P, us(1010)).ok());   // both reads still in flight
    CHECK(e.frames.free_pages() == frames - 2);
    CHECK(e.ssd->free_slots() == slots);   // the slots are read until the reads end
    e.vm->complete_io(us(2000));
    CHECK(e.ssd->free_slots() == slots + 2);
    CHECK(e.frames.free_pages() == frames - 1);   // the pinned page's frame stays until its unpin
    CHECK(e.vm->pin_count(e.pid, m.value + P) == 1);
    CHECK(e.vm->unpin(e.pid, m.value + P, P, us(2000)).ok());
    CHECK(e.frames.free_pages() == frames);
}

TEST_CASE("vm: an allocation failure runs direct reclaim in the faulting call", "[os][vm][reclaim]") {
    Env e(Settings{{"vm.thp", "never"}}, 4 * MiB);   // 1024 frames
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 8 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    sc_time t = T0;
    bool checked_cost = false;
    for (std::uint64_t i = 0; i < 1500; ++i) {   // 6 MiB in 4 MiB of DRAM
        const std::uint64_t dr = e.counter("direct_reclaims");
        const auto r = e.vm->touch(e.pid, m.value + i * P, true, t);
        REQUIRE(r.ok());
        if (e.counter("direct_reclaims") > dr && !checked_cost) {
            // the fault waited for 32 swap writes: 20 us + 32 x 1 us on the channel
            CHECK(r.done - t >= kFault4k + us(52));
            checked_cost = true;
        }
        REQUIRE(e.vm->write_user(e.pid, m.value + i * P, reinterpret_cast<const unsigned char*>(&i), sizeof i));
        t = r.done;
    }
    CHECK(checked_cost);
    CHECK(e.counter("direct_reclaims") > 0);
    CHECK(e.counter("swap_outs") == 32 * e.counter("direct_reclaims"));
    for (std::uint64_t i = 0; i < 1500; ++i) {
        std::uint64_t v = ~0ull;
        REQUIRE(e.vm->read_user(e.pid, m.value + i * P, reinterpret_cast<unsigned char*>(&v), sizeof v));
        CHECK(v == i);
    }
    // Without swap the same workload runs out of memory.
    Env n(Settings{{"vm.thp", "never"}}, 4 * MiB);
    const auto m2 = n.vm->mmap(n.pid, 8 * MiB, Prot::ReadWrite, false, T0);
    VmError err = VmError::Ok;
    for (std::uint64_t i = 0; i < 1500 && err == VmError::Ok; ++i)
        err = n.vm->touch(n.pid, m2.value + i * P, true, T0).error;
    CHECK(err == VmError::NoMemory);
    CHECK(n.counter("direct_reclaims") == 0);
}

TEST_CASE("vm: munmap and MADV_DONTNEED free the slots of swapped pages", "[os][vm][reclaim]") {
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 8 * P, Prot::ReadWrite, false, T0);
    for (unsigned i = 0; i < 8; ++i) write_page(e, m.value + i * P, i);
    const std::uint64_t slots0 = e.ssd->free_slots();
    REQUIRE(e.vm->reclaim(e.vm->free_bytes() + 8 * P, T0).value == 8);
    CHECK(e.ssd->free_slots() == slots0 - 8);
    REQUIRE(e.vm->madvise(e.pid, m.value, 2 * P, Advice::DontNeed, us(100)).ok());
    CHECK(e.ssd->free_slots() == slots0 - 6);
    CHECK(read_page(e, m.value) == std::vector<unsigned char>(P, 0));   // zero-filled again, no major fault
    CHECK(e.counter("faults_major") == 0);
    REQUIRE(e.vm->munmap(e.pid, m.value + 2 * P, 6 * P, us(200)).ok());
    CHECK(e.ssd->free_slots() == slots0);
}

TEST_CASE("vm: reclaim splits an old huge page first, invalidating each change", "[os][vm][reclaim]") {
    Env e;   // thp always
    e.vm->set_swap(*e.ssd);
    std::vector<InvRec> inv;
    record_invalidations(e, inv);
    const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, true, T0);
    REQUIRE(e.counter("faults_huge") == 1);
    write_page(e, m.value + P, 7);
    inv.clear();
    // The split takes a frame for the new page table: two pages must go.
    REQUIRE(e.vm->reclaim(e.vm->free_bytes() + P, T0).value == 2);
    CHECK(e.counter("huge_splits") == 1);
    CHECK(e.vm->swapped(e.pid, m.value));
    CHECK(e.vm->swapped(e.pid, m.value + P));
    CHECK(e.vm->present(e.pid, m.value + 2 * P));
    CHECK(smmu_walk(e, m.value + 2 * P, false).reads == 4);   // 4 KiB pages now
    REQUIRE(inv.size() == 3);   // AF cleared on the block, block split, pages 0-1 swapped out
    CHECK((inv[0].va == m.value && inv[0].len == 2 * MiB));
    CHECK((inv[1].va == m.value && inv[1].len == 2 * MiB));
    CHECK((inv[2].va == m.value && inv[2].len == 2 * P));
    CHECK(read_page(e, m.value + P) == pattern(7));
    CHECK(read_page(e, m.value) == std::vector<unsigned char>(P, 0));
}

TEST_CASE("vm: khugepaged collapses a range into a block walked in 3 reads, the window is invalidated first",
          "[os][vm][khugepaged]") {
    Env e(Settings{{"vm.thp", "madvise"}});
    std::vector<InvRec> inv;
    record_invalidations(e, inv);
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    for (unsigned i : {0u, 5u, 100u}) write_page(e, m.value + i * P, i);   // 4 KiB pages (no advice yet)
    REQUIRE(e.vm->madvise(e.pid, m.value, 4 * MiB, Advice::HugePage, T0).ok());
    const WalkResult before = smmu_walk(e, m.value + 5 * P, false);
    CHECK(before.reads == 4);
    CHECK(before.level == 3);
    const std::uint64_t free0 = e.frames.free_pages();
    inv.clear();

    const auto r = e.vm->khugepaged_scan(T0);
    CHECK(r.ok());
    CHECK(r.value == 1);
    // 512 PTEs scanned (5.12 us); PMD cleared at 5.12 us; copy 3 pages, clear
    // 509, clear + install (515.04 us); then the empty second range (10 ns).
    CHECK(r.done == ns(5120 + 515040 + 10));
    CHECK(e.counter("collapses") == 1);
    CHECK(e.counter("khugepaged_scanned") == 513);
    const Histogram* win = e.stats.find_histogram("node0.vm.collapse_window");
    REQUIRE(win);
    CHECK(win->count() == 1);
    CHECK(win->max() == Approx(515.04));
    REQUIRE(inv.size() == 1);
    CHECK(inv[0].va == m.value);
    CHECK(inv[0].len == 2 * MiB);
    CHECK(inv[0].at == ns(5120));   // at the start of the window
    CHECK(inv[0].free_pages == free0 - 512);   // the new block taken, no old frame freed yet
    CHECK(e.frames.free_pages() == free0 - 512 + 3 + 1);   // then 3 pages and the page table freed

    const WalkResult after = smmu_walk(e, m.value + 5 * P, false);
    CHECK(after.fault == FaultType::None);
    CHECK(after.reads == 3);
    CHECK(after.level == 2);
    std::uint64_t pa = 0;
    REQUIRE(e.vm->translate(e.pid, m.value, pa));
    CHECK(pa % (2 * MiB) == 0);
    for (unsigned i : {0u, 5u, 100u}) CHECK(read_page(e, m.value + i * P) == pattern(i));
    CHECK(read_page(e, m.value + P) == std::vector<unsigned char>(P, 0));
    // A second pass finds nothing to do.
    CHECK(e.vm->khugepaged_scan(r.done).value == 0);
}

TEST_CASE("vm: khugepaged needs max-ptes-none and an order-9 frame", "[os][vm][khugepaged]") {
    {
        Env e(Settings{{"vm.thp", "madvise"}, {"khugepaged.max-ptes-none", "510"}});
        const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        write_page(e, m.value, 1);   // 511 PTEs none > 510
        REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::HugePage, T0).ok());
        CHECK(e.vm->khugepaged_scan(T0).value == 0);
        write_page(e, m.value + P, 2);   // 510 none
        CHECK(e.vm->khugepaged_scan(T0).value == 1);
    }
    {
        Env e(Settings{{"vm.thp", "never"}}, 4 * MiB);
        const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        write_page(e, m.value, 1);
        // Fragment memory: a page held in the other 2 MiB block.
        const auto f = e.vm->mmap(e.pid, 3 * MiB, Prot::ReadWrite, true, T0);
        REQUIRE(f.ok());
        REQUIRE_FALSE(e.frames.can_alloc(9));
        REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::HugePage, T0).ok());
        // thp=never: no range is eligible even with MADV_HUGEPAGE.
        CHECK(e.vm->khugepaged_scan(T0).value == 0);
        CHECK(e.counter("collapse_failed_alloc") == 0);
    }
    {
        Env e(Settings{{"vm.thp", "madvise"}}, 4 * MiB);
        const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        write_page(e, m.value, 1);
        const auto f = e.vm->mmap(e.pid, 3 * MiB, Prot::ReadWrite, true, T0);
        REQUIRE(f.ok());
        REQUIRE_FALSE(e.frames.can_alloc(9));
        REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::HugePage, T0).ok());
        const auto r = e.vm->khugepaged_scan(T0);
        CHECK(r.error == VmError::NoMemory);
        CHECK(r.value == 0);
        CHECK(e.counter("collapse_failed_alloc") == 1);
        CHECK(read_page(e, m.value) == pattern(1));
    }
}

TEST_CASE("vm: pinned pages block collapse, or become stale pins on older kernels", "[os][vm][khugepaged]") {
    for (const bool block : {true, false}) {
        CAPTURE(block);
        Env e(Settings{{"vm.thp", "madvise"}, {"vm.pins-block-thp-collapse", block ? "true" : "false"}});
        const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        for (unsigned i : {0u, 5u, 100u}) write_page(e, m.value + i * P, i);
        const std::uint64_t va = m.value + 5 * P;
        REQUIRE(e.vm->pin(e.pid, va, P, T0).ok());
        std::uint64_t old_pa = 0;
        REQUIRE(e.vm->translate(e.pid, va, old_pa));
        REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::HugePage, T0).ok());
        const std::uint64_t free0 = e.frames.free_pages();
        const auto r = e.vm->khugepaged_scan(T0);
        std::uint64_t pa = 0;
        REQUIRE(e.vm->translate(e.pid, va, pa));
        if (block) {
            CHECK(r.value == 0);
            CHECK(e.counter("collapse_skipped_pinned") == 1);
            CHECK(e.counter("collapses") == 0);
            CHECK(pa == old_pa);
            CHECK(smmu_walk(e, va, false).reads == 4);
        } else {
            CHECK(r.value == 1);
            CHECK(e.counter("collapses") == 1);
            CHECK(e.counter("stale_pins") == 1);
            CHECK(pa != old_pa);   // the pin now refers to a frame no longer mapped
            CHECK(e.vm->pin_count(e.pid, va) == 1);
            CHECK(e.vm->pinned_bytes(e.pid) == P);
            CHECK(e.frames.free_pages() == free0 - 512 + 2 + 1);   // the pinned old frame stays
            // What the device writes to the pinned frame is not what the process sees.
            const unsigned char x = 'X';
            REQUIRE(e.vm->write_user(e.pid, va, &x, 1));
            CHECK(e.mem.byte(old_pa) == pattern(5)[0]);
            CHECK(e.mem.byte(pa) == 'X');
            REQUIRE(e.vm->unpin(e.pid, va, P, T0).ok());
            CHECK(e.frames.free_pages() == free0 - 512 + 2 + 1 + 1);
        }
    }
}

TEST_CASE("vm: compaction frees a 2 MiB block and never moves a pinned page", "[os][vm][compaction]") {
    Env e(Settings{{"vm.thp", "never"}}, 8 * MiB);
    std::vector<InvRec> inv;
    record_invalidations(e, inv);
    // 1536 pages and 6 table frames fill physical blocks 0-2 (each holding a
    // page table) and 6 frames of block 3. Keep the pages in block 3 (the
    // first pinned), unmap every other page.
    const auto m = e.vm->mmap(e.pid, 6 * MiB, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    std::vector<std::uint64_t> in3;
    for (std::uint64_t va = m.value; va < m.value + 6 * MiB; va += P) {
        std::uint64_t pa = 0;
        REQUIRE(e.vm->translate(e.pid, va, pa));
        if (pa / (2 * MiB) == 3) in3.push_back(va);
        else REQUIRE(e.vm->munmap(e.pid, va, P, T0).ok());
    }
    REQUIRE(in3.size() == 6);
    for (std::uint64_t va : in3) write_page(e, va, va);
    REQUIRE(e.vm->pin(e.pid, in3[0], P, T0).ok());
    std::uint64_t pinned_pa = 0, pa = 0;
    REQUIRE(e.vm->translate(e.pid, in3[0], pinned_pa));
    const std::uint64_t blocks0 = e.frames.free_blocks(9), free0 = e.frames.free_pages();
    REQUIRE(blocks0 == 0);
    inv.clear();

    // Every block holds a page table or a pinned page: nothing moves.
    const auto r0 = e.vm->compact(512, us(10));
    CHECK(r0.error == VmError::NoMemory);
    CHECK(r0.value == 0);
    CHECK(e.counter("compactions_failed") == 1);
    CHECK(inv.empty());
    REQUIRE(e.vm->translate(e.pid, in3[0], pa));
    CHECK(pa == pinned_pa);
    // A limit below the block's pages: nothing moves either.
    REQUIRE(e.vm->unpin(e.pid, in3[0], P, T0).ok());
    CHECK(e.vm->compact(5, us(20)).value == 0);
    CHECK(e.counter("compactions_failed") == 2);

    const auto r = e.vm->compact(512, us(100));
    CHECK(r.ok());
    CHECK(r.value == 6);
    CHECK(e.counter("pages_migrated") == 6);
    CHECK(e.counter("compactions") == 3);
    CHECK(e.frames.free_blocks(9) == 1);
    CHECK(e.frames.free_pages() == free0);
    CHECK(r.done > us(100) + 6 * (us(2) + ns(20)));
    for (std::uint64_t va : in3) {
        REQUIRE(e.vm->translate(e.pid, va, pa));
        CHECK(pa / (2 * MiB) != 3);
        CHECK(read_page(e, va) == pattern(va));
    }
    // The notifier covered every moved page before the old frames were freed.
    std::uint64_t len = 0;
    for (const auto& i : inv) {
        len += i.len;
        CHECK(i.free_pages == free0 - 6);
    }
    CHECK(len == 6 * P);
}

TEST_CASE("vm: khugepaged reads back up to max-ptes-swap swapped pages", "[os][vm][khugepaged]") {
    for (const char* max_swap : {"0", "64"}) {
        CAPTURE(max_swap);
        Env e(Settings{{"vm.thp", "madvise"}, {"khugepaged.max-ptes-swap", max_swap}});
        e.vm->set_swap(*e.ssd);
        const auto m = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
        for (unsigned i = 0; i < 3; ++i) write_page(e, m.value + i * P, i + 10);
        const std::uint64_t slots0 = e.ssd->free_slots();
        REQUIRE(e.vm->reclaim(e.vm->free_bytes() + P, T0).value == 1);   // page 0 to swap
        REQUIRE(e.vm->swapped(e.pid, m.value));
        REQUIRE(e.vm->madvise(e.pid, m.value, 2 * MiB, Advice::HugePage, T0).ok());
        const auto r = e.vm->khugepaged_scan(us(1000));
        if (std::string(max_swap) == "0") {
            CHECK(r.value == 0);
            CHECK(e.vm->swapped(e.pid, m.value));
            CHECK(e.ssd->free_slots() == slots0 - 1);
        } else {
            CHECK(r.value == 1);
            CHECK(e.counter("swap_ins") == 1);
            CHECK(e.counter("faults_major") == 0);
            CHECK(e.ssd->free_slots() == slots0);
            CHECK(smmu_walk(e, m.value, false).level == 2);
            for (unsigned i = 0; i < 3; ++i) CHECK(read_page(e, m.value + i * P) == pattern(i + 10));
        }
    }
}

// ---- the collapse window in simulated time (two phases)

namespace {
// A range ready for khugepaged: pages 0, 5, 100 written, then MADV_HUGEPAGE.
std::uint64_t collapse_setup(Env& e) {
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    for (unsigned i : {0u, 5u, 100u}) write_page(e, m.value + i * P, i);
    REQUIRE(e.vm->madvise(e.pid, m.value, 4 * MiB, Advice::HugePage, T0).ok());
    return m.value;
}
const sc_time kClear = ns(5120);   // 512 PTEs scanned
const sc_time kInstall = ns(5120) + ns(515040);   // 3 copied, 509 zeroed, 2 PTE updates
}   // namespace

TEST_CASE("vm: the collapse window: PTEs gone from its start, block installed at its end", "[os][vm][khugepaged]") {
    Env e(Settings{{"vm.thp", "madvise"}});
    std::vector<InvRec> inv;
    record_invalidations(e, inv);
    const std::uint64_t va = collapse_setup(e);
    const std::uint64_t free0 = e.frames.free_pages();
    inv.clear();

    const auto b = e.vm->collapse_begin(T0);
    CHECK(b.ok());
    const VmCollapse c = e.vm->collapsing();
    REQUIRE(c.open);
    CHECK(c.pid == e.pid);
    CHECK(c.va == va);
    CHECK(c.clear == kClear);
    CHECK(c.install == kInstall);
    CHECK(b.done == kInstall);
    CHECK(b.value == 0);   // no collapse completed yet in this pass
    // The notifier at the window's start, before any old frame was freed.
    REQUIRE(inv.size() == 1);
    CHECK(inv[0].va == va);
    CHECK(inv[0].len == 2 * MiB);
    CHECK(inv[0].at == kClear);
    CHECK(inv[0].free_pages == free0 - 512);
    CHECK(e.frames.free_pages() == free0 - 512);   // old frames still held during the window
    CHECK(e.counter("collapses") == 0);

    // Inside the window: an SMMU walk finds no PTE (translation fault).
    for (unsigned i : {0u, 5u, 100u, 511u}) CHECK(smmu_walk(e, va + i * P, false).fault == FaultType::Translation);
    CHECK_FALSE(e.vm->present(e.pid, va + 5 * P));
    // The other range is untouched and not collapsing.
    CHECK_FALSE(e.vm->collapsing().va == va + 2 * MiB);

    const auto end = e.vm->collapse_end(kInstall);
    CHECK(end.value == 1);
    CHECK(end.done == kInstall);
    CHECK_FALSE(e.vm->collapsing().open);
    CHECK(e.counter("collapses") == 1);
    CHECK(e.frames.free_pages() == free0 - 512 + 3 + 1);   // 3 old pages and the page table
    const WalkResult after = smmu_walk(e, va + 5 * P, false);
    CHECK(after.fault == FaultType::None);
    CHECK(after.reads == 3);
    CHECK(after.level == 2);
    for (unsigned i : {0u, 5u, 100u}) CHECK(read_page(e, va + i * P) == pattern(i));
    const Histogram* win = e.stats.find_histogram("node0.vm.collapse_window");
    REQUIRE(win);
    CHECK(win->max() == Approx(515.04));

    // The pass goes on: the second range (empty) and the pass's result.
    const auto rest = e.vm->collapse_begin(kInstall);
    CHECK_FALSE(e.vm->collapsing().open);
    CHECK(rest.ok());
    CHECK(rest.value == 1);
    CHECK(rest.done == kInstall + ns(10));
    CHECK(e.counter("khugepaged_scanned") == 513);
    // collapse_end without an open window changes nothing.
    const auto none = e.vm->collapse_end(us(2000));
    CHECK(none.value == 0);
    CHECK(none.done == us(2000));
}

TEST_CASE("vm: a fault inside the collapse window waits for the block", "[os][vm][khugepaged]") {
    for (const bool range : {false, true}) {
        CAPTURE(range);
        Env e(Settings{{"vm.thp", "madvise"}});
        const std::uint64_t va = collapse_setup(e);
        const std::uint64_t free0 = e.frames.free_pages();
        const std::uint64_t zero_fills = e.counter("zero_fills"), minor = e.counter("faults_minor");
        REQUIRE(e.vm->collapse_begin(T0).done == kInstall);
        const sc_time t = us(100);   // inside the window
        // A page never touched (7) and a written one (5).
        const auto r =
            range ? e.vm->fault_in(e.pid, va + 5 * P, 3 * P, true, t) : e.vm->touch(e.pid, va + 7 * P, true, t);
        CHECK(r.ok());
        CHECK(r.done >= kInstall);
        // Waited until the install, then the fault (taken) and the access(es) to the block.
        CHECK(r.done == kInstall + us(2) + ns(100));
        CHECK(r.value == 0);   // nothing new made present: the block was found
        CHECK_FALSE(e.vm->collapsing().open);
        CHECK(e.counter("zero_fills") == zero_fills);   // no new small page
        CHECK(e.counter("faults_minor") == minor);
        CHECK(e.counter("collapses") == 1);
        const WalkResult w = smmu_walk(e, va + 7 * P, false);
        CHECK(w.fault == FaultType::None);
        CHECK(w.reads == 3);
        CHECK(e.frames.free_pages() == free0 - 512 + 3 + 1);
        for (unsigned i : {0u, 5u, 100u}) CHECK(read_page(e, va + i * P) == pattern(i));
        CHECK(read_page(e, va + 7 * P) == std::vector<unsigned char>(P, 0));
        // The thread's phase 2 finds nothing left to do.
        CHECK(e.vm->collapse_end(kInstall).value == 0);
    }
}

TEST_CASE("vm: munmap inside the collapse window completes the collapse first", "[os][vm][khugepaged]") {
    Env e(Settings{{"vm.thp", "madvise"}});
    std::vector<InvRec> inv;
    record_invalidations(e, inv);
    const std::uint64_t va = collapse_setup(e);
    const std::uint64_t free0 = e.frames.free_pages();
    REQUIRE(e.vm->collapse_begin(T0).ok());
    inv.clear();
    const auto r = e.vm->munmap(e.pid, va, 2 * MiB, us(100));
    CHECK(r.ok());
    CHECK(r.done == kInstall + ns(500) + ns(20));   // waits, then syscall + one block PTE cleared
    CHECK_FALSE(e.vm->collapsing().open);
    REQUIRE(inv.size() == 1);
    CHECK(inv[0].at == kInstall + ns(520));
    CHECK(e.frames.free_pages() == free0 + 3 + 1);   // old pages, table and the block all back
    CHECK(smmu_walk(e, va, false).fault == FaultType::Translation);
    unsigned char x = 0;
    CHECK_FALSE(e.vm->peek_user(e.pid, va, &x, 1));
}

TEST_CASE("vm: the data pattern written and checked without its bytes, as write_user and peek_user do", "[os][vm]") {
    // write_user_pattern and peek_user_pattern against write_user and
    // peek_user with the bytes: in frames (the DRAM compares), swapped out
    // (the slot's bytes compared here), never touched (zeros), across pages.
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 4 * P, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    const PatternPlace at = pattern_advance(pattern_place(11), 3);
    const std::uint64_t va = m.value + 100, len = 2 * P - 200;   // the end of page 0 into page 1
    REQUIRE(e.vm->write_user_pattern(e.pid, va, len, at));
    CHECK(e.vm->present(e.pid, m.value));   // faulted in, as write_user does
    std::vector<unsigned char> want(len), got(len);
    pattern_bytes(want.data(), len, at);
    REQUIRE(e.vm->peek_user(e.pid, va, got.data(), len));
    CHECK(got == want);
    // Checks, each against the bytes' own answer.
    auto check = [&](std::uint64_t a, std::uint64_t n, PatternPlace p) {
        std::vector<unsigned char> b(n);
        REQUIRE(e.vm->peek_user(e.pid, a, b.data(), n));
        std::uint64_t first = 0;
        REQUIRE(e.vm->peek_user_pattern(e.pid, a, n, p, first));
        CHECK(first == pattern_bytes_mismatch(b.data(), n, p));
        return first;
    };
    CHECK(check(va, len, at) == len);
    CHECK(check(va + 1000, 3000, pattern_advance(at, 1000)) == 3000);
    CHECK(check(va, len, pattern_advance(at, 8)) < len);   // another place
    const unsigned char poke = static_cast<unsigned char>(want[5000] ^ 0x5a);
    REQUIRE(e.vm->write_user(e.pid, va + 5000, &poke, 1));
    CHECK(check(va, len, at) == 5000);
    CHECK(check(m.value + 3 * P, P, at) < P);   // never touched: zeros
    CHECK_FALSE(e.vm->present(e.pid, m.value + 3 * P));
    // Swapped out: compared with the slot's bytes, and still swapped.
    REQUIRE(e.vm->write_user_pattern(e.pid, va, len, at));
    REQUIRE(e.vm->reclaim(e.vm->free_bytes() + 2 * P, T0).value == 2);
    REQUIRE(e.vm->swapped(e.pid, m.value + P));
    CHECK(check(va, len, at) == len);
    CHECK(check(va + 4000, 500, at) < 500);
    CHECK(e.vm->swapped(e.pid, m.value + P));
    // Outside every VMA: false, as peek_user and write_user.
    std::uint64_t first = 0;
    CHECK_FALSE(e.vm->peek_user_pattern(e.pid, m.value + 3 * P, P + 1, at, first));
    CHECK_FALSE(e.vm->write_user_pattern(e.pid, m.value + 4 * P, 8, at));
}

TEST_CASE("vm: peek_user reads user memory without changing anything", "[os][vm]") {
    Env e(Settings{{"vm.thp", "never"}});
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 4 * P, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    write_page(e, m.value, 1);
    write_page(e, m.value + P, 2);
    // Two sweeps: AF cleared, then both pages swapped out.
    REQUIRE(e.vm->reclaim(e.vm->free_bytes() + 2 * P, T0).value == 2);
    REQUIRE(e.vm->swapped(e.pid, m.value + P));
    const std::uint64_t free0 = e.frames.free_pages(), slots0 = e.ssd->free_slots();
    const std::uint64_t swap_ins = e.counter("swap_ins"), majors = e.counter("faults_major");
    const Counter* ssd_reads = e.stats.find_counter("node0.ssd.reads");
    REQUIRE(ssd_reads);
    const std::uint64_t reads0 = ssd_reads->value();
    const sc_time busy0 = e.cpu->busy("page-fault");

    std::vector<unsigned char> buf(P);
    // A swapped page: its slot's bytes, and it stays swapped.
    REQUIRE(e.vm->peek_user(e.pid, m.value + P, buf.data(), P));
    CHECK(buf == pattern(2));
    CHECK(e.vm->swapped(e.pid, m.value + P));
    // Across a page boundary: the end of page 0 and the start of page 1.
    std::vector<unsigned char> two(16);
    REQUIRE(e.vm->peek_user(e.pid, m.value + P - 8, two.data(), 16));
    for (unsigned i = 0; i < 8; ++i) {
        CHECK(two[i] == pattern(1)[P - 8 + i]);
        CHECK(two[8 + i] == pattern(2)[i]);
    }
    // A page never touched: zeros, still not present.
    std::fill(buf.begin(), buf.end(), 0xEE);
    REQUIRE(e.vm->peek_user(e.pid, m.value + 3 * P, buf.data(), P));
    CHECK(buf == std::vector<unsigned char>(P, 0));
    CHECK_FALSE(e.vm->present(e.pid, m.value + 3 * P));
    // Unmapped addresses: false (also a range running past the VMA's end).
    CHECK_FALSE(e.vm->peek_user(e.pid, m.value + 4 * P, buf.data(), 1));
    CHECK_FALSE(e.vm->peek_user(e.pid, m.value + 3 * P, buf.data(), P + 1));
    CHECK_FALSE(e.vm->peek_user(e.pid + 7, m.value, buf.data(), 1));
    CHECK(e.cpu->busy("page-fault") == busy0);   // no time charged
    // A present page.
    const unsigned char msg[] = "peek";
    REQUIRE(e.vm->write_user(e.pid, m.value + 2 * P + 10, msg, sizeof msg));
    const std::uint64_t af = e.counter("faults_af");
    unsigned char back[sizeof msg] = {};
    REQUIRE(e.vm->peek_user(e.pid, m.value + 2 * P + 10, back, sizeof msg));
    CHECK(std::memcmp(back, msg, sizeof msg) == 0);

    // Nothing changed: frames, slots, counters, SSD reads, CPU time.
    CHECK(e.frames.free_pages() == free0 - 1);   // only write_user above took a frame
    CHECK(e.ssd->free_slots() == slots0);
    CHECK(e.counter("swap_ins") == swap_ins);
    CHECK(e.counter("faults_major") == majors);
    CHECK(ssd_reads->value() == reads0);
    CHECK(e.vm->swapped(e.pid, m.value));
    CHECK(e.vm->swapped(e.pid, m.value + P));
    CHECK(e.counter("faults_af") == af);
}

TEST_CASE("vm: pinning part of a huge page splits it, pinning all of it does not", "[os][vm]") {
    Env e(Settings{{"vm.thp", "always"}});
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, true, T0);   // two 2 MiB blocks
    REQUIRE(m.ok());
    int level = 0;
    std::uint64_t pa = 0;
    REQUIRE(walk(e.mem, e.vm->root(e.pid), m.value, level, pa));
    REQUIRE(level == 2);
    const unsigned char msg[] = "kept";
    REQUIRE(e.vm->write_user(e.pid, m.value + 5 * 4096, msg, 5));
    const std::uint64_t splits0 = e.counter("huge_splits");
    // Part of the first block: split, so the unpinned pages stay reclaimable.
    REQUIRE(e.vm->pin(e.pid, m.value + 5 * 4096, 2 * 4096, T0).ok());
    CHECK(e.counter("huge_splits") == splits0 + 1);
    REQUIRE(walk(e.mem, e.vm->root(e.pid), m.value + 5 * 4096, level, pa));
    CHECK(level == 3);
    REQUIRE(walk(e.mem, e.vm->root(e.pid), m.value, level, pa));
    CHECK(level == 3);
    char back[5] = {};
    REQUIRE(e.vm->peek_user(e.pid, m.value + 5 * 4096, reinterpret_cast<unsigned char*>(back), 5));
    CHECK(std::string(back) == "kept");
    CHECK(e.vm->pin_count(e.pid, m.value + 5 * 4096) == 1);
    // All of the second block: it stays a block.
    REQUIRE(e.vm->pin(e.pid, m.value + 2 * MiB, 2 * MiB, T0).ok());
    CHECK(e.counter("huge_splits") == splits0 + 1);
    REQUIRE(walk(e.mem, e.vm->root(e.pid), m.value + 2 * MiB + 4096, level, pa));
    CHECK(level == 2);
}

TEST_CASE("vm: a copy page after page walks the tables above the leaf once per 2 MiB region", "[os][vm]") {
    // 500 present pages from 4 pages before a 2 MiB boundary: a write and
    // a read of all of them walk from the root once per region (four
    // descriptor reads), then read one leaf per page, and copy each page
    // once. Walking from the root at every page (and once more to find
    // the frame) would take several times as many debug transactions.
    Env e(Settings{{"vm.thp", "never"}}, 64 * MiB);
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    const std::uint64_t va = (m.value / (2 * MiB) + 1) * (2 * MiB) - 4 * P;   // 4 pages before the next boundary
    REQUIRE(va >= m.value);
    const std::uint64_t pages = 500, len = pages * P;
    std::vector<unsigned char> data(len);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 13 + i / 4096);
    std::uint64_t tx0 = e.mem.transactions;
    REQUIRE(e.vm->write_user(e.pid, va, data.data(), len));
    INFO("write: " << e.mem.transactions - tx0 << " debug transactions");
    CHECK(e.mem.transactions - tx0 <= 2 * 4 + pages - 2 + pages);   // two walks, a leaf and a copy per page
    std::vector<unsigned char> back(len);
    tx0 = e.mem.transactions;
    REQUIRE(e.vm->read_user(e.pid, va, back.data(), len));
    CHECK(e.mem.transactions - tx0 <= 2 * 4 + pages - 2 + pages);
    CHECK(back == data);
    std::vector<unsigned char> peeked(len);
    REQUIRE(e.vm->peek_user(e.pid, va, peeked.data(), len));
    CHECK(peeked == data);
    // Each page's bytes are in its own frame, as a fresh walk finds it.
    for (std::uint64_t k = 0; k < pages; k += 97) {
        std::uint64_t pa = 0;
        REQUIRE(e.vm->translate(e.pid, va + k * P, pa));
        CHECK(e.mem.byte(pa) == data[k * P]);
    }
}

TEST_CASE("vm: a copy that faults page after page lands every page in its own frame", "[os][vm]") {
    // Nothing present: each page of the copy faults (a new level-3 table at
    // the first page of each region), and the walk after a fault starts
    // from the root again.
    Env e(Settings{{"vm.thp", "never"}}, 64 * MiB);
    const auto m = e.vm->mmap(e.pid, 4 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(m.ok());
    const std::uint64_t va = (m.value / (2 * MiB) + 1) * (2 * MiB) - 3 * P;
    const std::uint64_t len = 8 * P;
    std::vector<unsigned char> data(len);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 5 + i / 4096 + 1);
    REQUIRE(e.vm->write_user(e.pid, va, data.data(), len));
    for (std::uint64_t k = 0; k < 8; ++k) {
        std::uint64_t pa = 0;
        REQUIRE(e.vm->translate(e.pid, va + k * P, pa));
        for (std::uint64_t b = 0; b < P; b += 1021) CHECK(e.mem.byte(pa + b) == data[k * P + b]);
    }
    std::vector<unsigned char> back(len);
    REQUIRE(e.vm->peek_user(e.pid, va, back.data(), len));
    CHECK(back == data);
}

TEST_CASE("vm: reclaim's host work follows the pages it looks at, not the size of memory", "[os][vm][reclaim]") {
    // 12288 present pages (48 MiB). Once the clock has aged them all, each
    // reclaim of 32 pages looks at 32 pages: its work (debug transactions
    // into DRAM, the host's cost) must not grow with the 12288.
    Env e(Settings{{"vm.thp", "never"}}, 64 * MiB);
    e.vm->set_swap(*e.ssd);
    const auto m = e.vm->mmap(e.pid, 48 * MiB, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    const auto first = e.vm->reclaim(e.vm->free_bytes() + 32 * P, T0);   // one sweep clears every AF
    REQUIRE(first.ok());
    CHECK(e.counter("pages_scanned") == 12288 + 32);
    sc_time t = first.done;
    for (int round = 0; round < 10; ++round) {
        const std::uint64_t scanned0 = e.counter("pages_scanned"), tx0 = e.mem.transactions;
        const auto r = e.vm->reclaim(e.vm->free_bytes() + 32 * P, t);
        REQUIRE(r.ok());
        CHECK(r.value == 32);
        CHECK(e.counter("pages_scanned") - scanned0 == 32);   // the clock goes on from its hand
        INFO("round " << round << ": " << e.mem.transactions - tx0 << " debug transactions");
        CHECK(e.mem.transactions - tx0 < 32 * 20);   // a few per page, never one per present PTE
        t = r.done;
    }
}

TEST_CASE("vm: THP mode x buffer advice, at fault time and in khugepaged", "[os][vm][thp]") {
    // transhuge.rst: always: every range unless MADV_NOHUGEPAGE; madvise:
    // only MADV_HUGEPAGE ranges; never: none. khugepaged honours the same.
    const std::string mode = GENERATE(as<std::string>{}, "always", "madvise", "never");
    const std::string advice = GENERATE(as<std::string>{}, "none", "hugepage", "nohugepage");
    const bool huge = advice != "nohugepage" && (mode == "always" || (mode == "madvise" && advice == "hugepage"));
    INFO("vm.thp = " << mode << ", advice " << advice);
    Env e(Settings{{"vm.thp", mode}}, 16 * MiB);
    auto advise = [&](std::uint64_t va) {
        if (advice == "hugepage") REQUIRE(e.vm->madvise(e.pid, va, 2 * MiB, Advice::HugePage, T0).ok());
        if (advice == "nohugepage") REQUIRE(e.vm->madvise(e.pid, va, 2 * MiB, Advice::NoHugePage, T0).ok());
    };
    // At fault time.
    const auto a = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(a.ok());
    advise(a.value);
    CHECK(e.vm->touch(e.pid, a.value, true, T0).value == (huge ? 512u : 1u));
    CHECK(e.counter("faults_huge") == (huge ? 1u : 0u));
    // khugepaged: a range faulted in as 4 KiB pages while no 2 MiB frame was
    // free (one frame held in every block), then the frames given back.
    const auto b = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, false, T0);
    REQUIRE(b.ok());
    advise(b.value);
    std::vector<std::uint64_t> held;
    while (e.frames.can_alloc(9)) {
        auto f = e.frames.alloc(9);
        REQUIRE(f);
        e.frames.split(*f, 9);
        for (unsigned o = 8; o >= 1; --o)
            for (std::uint64_t x = *f; x < *f + 2 * MiB; x += 4096ull << o) e.frames.split(x, o);
        for (std::uint64_t p = *f + 4096; p < *f + 2 * MiB; p += 4096) e.frames.free(p, 0);
        held.push_back(*f);
    }
    std::vector<unsigned char> data(2 * MiB);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 13 + i / 4096);
    REQUIRE(e.vm->write_user(e.pid, b.value, data.data(), data.size()));
    CHECK(e.counter("faults_huge") == (huge ? 1u : 0u));   // no 2 MiB frame: 4 KiB pages
    for (std::uint64_t f : held) e.frames.free(f, 0);
    // The 4 KiB frames came from all over the held blocks: give the first
    // mapping back so that a whole 2 MiB frame is free (a's block, if huge).
    REQUIRE(e.vm->munmap(e.pid, a.value, 2 * MiB, T0).ok());
    const auto r = e.vm->khugepaged_scan(us(10));
    REQUIRE(r.ok());
    CHECK(e.counter("collapses") == (huge ? 1u : 0u));
    int level = 0;
    std::uint64_t pa = 0;
    REQUIRE(walk(e.mem, e.vm->root(e.pid), b.value, level, pa) != 0);
    CHECK(level == (huge ? 2 : 3));
    std::vector<unsigned char> back(2 * MiB);
    REQUIRE(e.vm->read_user(e.pid, b.value, back.data(), back.size()));
    CHECK(back == data);
}
