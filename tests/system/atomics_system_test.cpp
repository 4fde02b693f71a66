// Network atomics through the whole System (RdmaProcess::post_atomic, the engines,
// the SMMU, the VM and the fault library) in every fault situation the
// strategy tests use: cold memory, swap-out, THP collapse and migration by
// compaction, in stall and in terminate mode. Node 0 and node 1 (the home,
// through its own engine: loopback) hammer words in the home process's
// memory with fetch-and-add, compare-and-swap increments and swaps, and every
// value is checked: each fetch-and-add word's old values are 0..n-1 exactly
// once, the CAS word counts every successful CAS, and the swap chain loses
// and duplicates nothing. One simulation per TEST_CASE (SystemC).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr unsigned kHome = 1;
constexpr unsigned kRounds = 16;   // per contender
constexpr unsigned kFaaWords = 8;   // fetch-and-add words, 16 KiB apart
constexpr std::uint64_t kStride = 16 * kKiB;
constexpr std::uint64_t kHuge = 2048 * kKiB;
// The CAS and swap words, in pages of their own.
constexpr std::uint64_t kCasOff = kFaaWords * kStride, kSwapOff = kCasOff + kStride;

enum class Situation { Cold, Swap, Thp, Migrate };
enum class Mode { Stall, Terminate };

struct Shared {
    std::uint64_t area = 0, base = 0;   // in the home process: the mapping, and word 0
    std::uint64_t bytes = 0;   // the mapping's size
    bool populate = true;   // MAP_POPULATE it (all but the cold situation)
    bool huge_aligned = false;   // THP: the words in a whole 2 MiB range of it
    std::uint64_t offset = 0;   // else: word 0 this far into it
    bool ready = false, started = false;
    unsigned done = 0;
    sc_event ev;
    std::map<unsigned, std::vector<std::uint64_t>> faa_olds;   // by word
    std::vector<std::uint64_t> swap_olds, swapped_in;
    std::uint64_t cas_successes = 0;
};

// One contender's program: kRounds rounds of a fetch-and-add, a CAS
// increment (retried until it succeeds) and a swap.
void contend(RdmaProcess& app, Shared& sh) {
    if (app.node() == kHome) {
        sh.area = app.alloc(sh.bytes, sh.populate);
        sh.base = sh.huge_aligned ? (sh.area + kHuge - 1) / kHuge * kHuge : sh.area + sh.offset;
        sh.ready = true;
        sh.ev.notify(app.now() - sc_time_stamp());
    }
    app.wait_until([&] { return sh.ready; }, sh.ev);
    const std::uint64_t rec = app.alloc_locked(sizeof(CompletionRecord));
    std::uint64_t tag = 0;
    auto atomic = [&](AtomicOp op, std::uint64_t off, std::uint64_t operand, std::uint64_t compare) {
        REQUIRE(app.post_atomic(op, kHome, sh.base + off, operand, compare, ++tag, rec));
        sh.started = true;
        const CompletionRecord r = app.wait_record(rec);
        REQUIRE(r.status == kStatusOk);
        REQUIRE(r.tag == tag);
        REQUIRE(r.bytes == 8);
        return r.addr;
    };
    for (unsigned i = 0; i < kRounds; ++i) {
        const unsigned w = (i + app.node()) % kFaaWords;
        sh.faa_olds[w].push_back(atomic(AtomicOp::FetchAdd, w * kStride, 1, 0));
        std::uint64_t expect = 0;
        for (;;) {
            const std::uint64_t old = atomic(AtomicOp::CompareSwap, kCasOff, expect + 1, expect);
            if (old == expect) break;
            expect = old;   // someone got there first: try from what it holds
        }
        ++sh.cas_successes;
        const std::uint64_t mine = (std::uint64_t(app.node() + 1) << 32) | (i + 1);
        sh.swapped_in.push_back(mine);
        sh.swap_olds.push_back(atomic(AtomicOp::Swap, kSwapOff, mine, 0));
    }
    ++sh.done;
}

void wait_until(sc_time t) {
    if (t > sc_time_stamp()) wait(t - sc_time_stamp());
}

bool wait_started(const Shared& sh) {
    while (!sh.started) {
        if (sh.done == 2) return false;
        wait(2, SC_US);
    }
    return true;
}

void atomics_case(Situation sit, Mode mode) {
    Settings set{{"rdma.strategy", "fault-tolerant"},
                 {"workload.kind", "pingpong"},   // its programs are replaced below
                 {"vm.thp", sit == Situation::Thp ? "madvise" : "never"},
                 {"smmu-driver.fault-mode", mode == Mode::Stall ? "stall" : "terminate"},
                 {"dma.fault-tolerant", mode == Mode::Stall ? "false" : "true"},
                 {"sim.time-limit", "200ms"}};
    SystemSim s(set);
    Shared sh;
    for (unsigned n = 0; n < 2; ++n) s.sys->node(n).app.program = [&](RdmaProcess& app) { contend(app, sh); };
    Node& home = s.sys->node(kHome);
    Vm& vm = home.vm;
    // Cold: the area is never touched before the engine's first atomic.
    // The others map it populated, then disturb it.
    sh.populate = sit != Situation::Cold;
    sh.bytes = 1024 * kKiB;
    if (sit == Situation::Thp) {
        sh.bytes = 2 * kHuge;
        sh.huge_aligned = true;
    }
    // Migrate: compaction moves pages only out of a 2 MiB block without page
    // tables; after the filler's 1.5 MiB the area's second half is in the next block.
    if (sit == Situation::Migrate) sh.offset = 768 * kKiB;
    std::uint64_t moved = 0;
    std::unique_ptr<At> agent;
    switch (sit) {
    case Situation::Cold: break;
    case Situation::Swap:
        agent = std::make_unique<At>("swapper", SC_ZERO_TIME, [&] {
            if (!wait_started(sh)) return;
            for (int round = 0; round < 20 && sh.done < 2; ++round) {
                wait_until(vm.reclaim(vm.free_bytes() + 128 * kKiB, sc_time_stamp()).done);
                wait(100, SC_US);
            }
        });
        break;
    case Situation::Thp:
        agent = std::make_unique<At>("khugepaged", SC_ZERO_TIME, [&] {
            if (!wait_started(sh)) return;
            const VmResult a = vm.madvise(home.app.pid(), sh.area, sh.bytes, Advice::HugePage, sc_time_stamp());
            INFO(to_string(a.error));
            REQUIRE(a.ok());
            while (sh.done < 2) {
                for (;;) {
                    wait_until(vm.collapse_begin(sc_time_stamp()).done);
                    if (!vm.collapsing().open) break;
                    wait_until(vm.collapse_end(sc_time_stamp()).done);
                }
                wait(20, SC_US);
            }
        });
        break;
    case Situation::Migrate:
        agent = std::make_unique<At>("compactor", SC_ZERO_TIME, [&] {
            const int filler = vm.create_process("filler");   // pushes the area past a block holding page tables
            REQUIRE(vm.mmap(filler, 1536 * kKiB, Prot::ReadWrite, true, sc_time_stamp()).ok());
            if (!wait_started(sh)) return;
            std::map<std::uint64_t, std::uint64_t> frame;
            auto look = [&] {
                for (std::uint64_t off = 0; off <= kSwapOff; off += kStride) {
                    std::uint64_t pa = 0;
                    if (!vm.translate(home.app.pid(), sh.base + off, pa)) continue;
                    auto it = frame.find(off);
                    if (it != frame.end() && it->second != pa) ++moved;
                    frame[off] = pa;
                }
            };
            look();
            while (sh.done < 2) {
                wait_until(vm.compact_begin(512, sc_time_stamp()).done);
                if (vm.migrating().open) wait_until(vm.compact_end(sc_time_stamp()).done);
                look();
                wait(10, SC_US);
            }
        });
        break;
    }
    s.run();
    if (std::getenv("VRDMASIM_TEST_STATS")) s.stats.write_text(std::cerr);
    REQUIRE(sh.done == 2);
    // Fetch-and-add: every old value of each word once, and the word holds the count.
    for (const auto& kv : sh.faa_olds) {
        std::vector<std::uint64_t> olds = kv.second;
        std::sort(olds.begin(), olds.end());
        for (std::size_t k = 0; k < olds.size(); ++k) CHECK(olds[k] == k);
        std::uint64_t v = 0;
        REQUIRE(home.app.debug_read(sh.base + kv.first * kStride, reinterpret_cast<unsigned char*>(&v), 8));
        CHECK(v == olds.size());
    }
    // CAS increments: each success counted once.
    std::uint64_t cas = 0;
    REQUIRE(home.app.debug_read(sh.base + kCasOff, reinterpret_cast<unsigned char*>(&cas), 8));
    CHECK(cas == sh.cas_successes);
    CHECK(cas == 2 * kRounds);
    // Swaps: the old values and the final one are the initial 0 and every value swapped in, once each.
    std::uint64_t last = 0;
    REQUIRE(home.app.debug_read(sh.base + kSwapOff, reinterpret_cast<unsigned char*>(&last), 8));
    std::vector<std::uint64_t> out = sh.swap_olds, in = sh.swapped_in;
    out.push_back(last);
    in.push_back(0);
    std::sort(out.begin(), out.end());
    std::sort(in.begin(), in.end());
    CHECK(out == in);
    CHECK(s.counter("node1.dma.atomics_executed") >= 3 * 2 * kRounds);
    CHECK(s.counter("node0.dma.atomics_failed") + s.counter("node1.dma.atomics_failed") == 0);
    // The situation happened.
    const std::uint64_t faults = s.counter("node1.smmu.cb0.faults_read") + s.counter("node1.smmu.cb0.faults_write");
    switch (sit) {
    case Situation::Cold:
        CHECK(faults > 0);   // the engine's first atomic on each page
        if (mode == Mode::Terminate) CHECK(s.counter("node1.dma.atomic_faults") > 0);
        break;
    case Situation::Swap:
        CHECK(s.counter("node1.vm.swap_outs") > 0);
        CHECK(faults + s.counter("node1.vm.faults_major") > 0);
        break;
    case Situation::Thp: CHECK(s.counter("node1.vm.collapses") > 0); break;
    case Situation::Migrate:
        CHECK(s.counter("node1.vm.pages_migrated") > 0);
        CHECK(moved > 0);
        break;
    }
}

}   // namespace

#define ATOMICS_CASE(sit, mode)                                                                                 \
    TEST_CASE("atomics / " #sit " / " #mode ": every old value once, no update lost or doubled", "[atomics]") { \
        atomics_case(Situation::sit, Mode::mode);                                                               \
    }
ATOMICS_CASE(Cold, Stall)
ATOMICS_CASE(Cold, Terminate)
ATOMICS_CASE(Swap, Stall)
ATOMICS_CASE(Swap, Terminate)
ATOMICS_CASE(Thp, Stall)
ATOMICS_CASE(Thp, Terminate)
ATOMICS_CASE(Migrate, Stall)
ATOMICS_CASE(Migrate, Terminate)
