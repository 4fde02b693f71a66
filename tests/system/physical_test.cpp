// The physical-address experiment ("why pinning exists", README.md):
// smmu.enabled = false with a registration strategy, the library handing the
// engine physical addresses. In each fault situation of
// tests/system/strategy_test.cpp (cold buffers, swap-out, THP collapse,
// migration by compaction; the SMMU's stall and terminate modes do not
// apply: there is no SMMU), an unpinned strategy (prefault) lets pages move
// under transfers and the run detects and reports it (wrong bytes, foreign
// frame writes, stale source reads), while pinning strategies keep every
// frame in place and nothing is found. Then the ownership check on its own:
// a frame of another process, of the same process at another page, of the
// kernel, a free frame. (The kernel model has no page cache, so no frame is
// ever the page cache's: that owner kind does not exist here.)
//
// The agents that push pages out, drive khugepaged and compact are adapted
// from strategy_test.cpp. One simulation per TEST_CASE (SystemC allows one
// elaboration per process).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "physical_engine.hpp"
#include "system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr std::uint64_t kKiB = 1024;

void wait_until(sc_time t) {
    if (t > sc_time_stamp()) wait(t - sc_time_stamp());
}

bool wait_first_post(SystemSim& s) {
    while (s.log().first_post == sc_max_time()) {
        if (s.finished()) return false;
        wait(5, SC_US);
    }
    return true;
}

enum class Situation { Cold, Swap, Thp, Migrate };

struct Outcome {
    PhysicalFindings f;
    std::uint64_t transfers = 0, errors = 0, verified = 0, total = 0, moved = 0;
    std::uint64_t swap_outs = 0, collapses = 0, migrated = 0;
    // The pressure was applied: reclaim rounds run, collapses tried (done or
    // skipped over pins), compaction runs.
    std::uint64_t reclaim_rounds = 0, collapse_tries = 0, compactions = 0;
};

// `reuse` (Swap only): after each reclaim round, another process on each
// node maps and populates 128 KiB, taking the lowest free frames: the ones
// reclaim just freed.
Outcome physical_case(const std::string& strategy, Situation sit, bool reuse = false) {
    std::uint64_t total = 1024 * kKiB, msg = 128 * kKiB;
    if (sit == Situation::Thp) total = 2048 * kKiB, msg = 256 * kKiB;
    const std::uint64_t count = total / msg;
    Settings set{{"smmu.enabled", "false"},
                 {"rdma.strategy", strategy},
                 {"rdma.pipeline-chunk", "32KiB"},
                 {"workload.total-bytes", std::to_string(total)},
                 {"workload.message-size", std::to_string(msg)},
                 {"workload.window", "2"},
                 {"workload.buffers", std::to_string(count)},
                 {"vm.thp", sit == Situation::Thp ? "madvise" : "never"},
                 {"vm.memlock-limit", "64MiB"},
                 {"sim.time-limit", "200ms"}};
    if (sit == Situation::Cold) {
        set.push_back({"workload.populate", "false"});
        set.push_back({"workload.fill-source", "false"});
    }
    SystemSim s(set);
    Outcome out;
    out.total = total;
    std::unique_ptr<At> agent;
    switch (sit) {
        case Situation::Cold:
            break;
        case Situation::Swap:
            // Both nodes push 128 KiB of their pages out to swap every 100 us.
            agent = std::make_unique<At>("swapper", SC_ZERO_TIME, [&] {
                if (!wait_first_post(s)) return;
                int thief[2] = {0, 0};
                if (reuse)
                    for (unsigned n = 0; n < 2; ++n) thief[n] = s.sys->node(n).vm.create_process("thief");
                for (int round = 0; round < 20 && !s.finished(); ++round) {
                    ++out.reclaim_rounds;
                    for (unsigned n = 0; n < 2; ++n) {
                        Vm& vm = s.sys->node(n).vm;
                        wait_until(vm.reclaim(vm.free_bytes() + 128 * kKiB, sc_time_stamp()).done);
                        if (reuse) {
                            const VmResult r = vm.mmap(thief[n], 128 * kKiB, Prot::ReadWrite, true, sc_time_stamp());
                            REQUIRE(r.ok());
                            wait_until(r.done);
                        }
                    }
                    wait(100, SC_US);
                }
            });
            break;
        case Situation::Thp:
            // 4 KiB buffers advised MADV_HUGEPAGE once transfers run, then
            // khugepaged passes every 50 us, each collapse's window open in
            // simulated time.
            agent = std::make_unique<At>("khugepaged", SC_ZERO_TIME, [&] {
                if (!wait_first_post(s)) return;
                wait(50, SC_US);
                for (unsigned n = 0; n < 2; ++n) {
                    Node& node = s.sys->node(n);
                    for (const auto& a : node.app.allocations())
                        REQUIRE(node.vm.madvise(node.app.pid(), a.first, (a.second + 4095) / 4096 * 4096,
                                                Advice::HugePage, sc_time_stamp())
                                    .ok());
                }
                while (!s.finished()) {
                    for (unsigned n = 0; n < 2; ++n) {
                        Vm& vm = s.sys->node(n).vm;
                        for (;;) {
                            const VmResult r = vm.collapse_begin(sc_time_stamp());
                            wait_until(r.done);
                            if (!vm.collapsing().open) break;
                            wait_until(vm.collapse_end(sc_time_stamp()).done);
                        }
                    }
                    wait(50, SC_US);
                }
            });
            break;
        case Situation::Migrate:
            // A filler process first (so that the buffers' pages run over
            // into a block holding none of their tables), then both nodes
            // compact every 20 us; buffer pages that changed frame counted.
            agent = std::make_unique<At>("compactor", SC_ZERO_TIME, [&] {
                for (unsigned n = 0; n < 2; ++n) {
                    Vm& vm = s.sys->node(n).vm;
                    const int filler = vm.create_process("filler");
                    REQUIRE(vm.mmap(filler, 1536 * kKiB, Prot::ReadWrite, true, sc_time_stamp()).ok());
                }
                if (!wait_first_post(s)) return;
                std::map<std::pair<unsigned, std::uint64_t>, std::uint64_t> frame;
                auto look = [&] {
                    for (unsigned n = 0; n < 2; ++n) {
                        Node& node = s.sys->node(n);
                        for (const auto& a : node.app.allocations())
                            for (std::uint64_t va = a.first; va < a.first + a.second; va += 4096) {
                                std::uint64_t pa = 0;
                                if (!node.vm.translate(node.app.pid(), va, pa)) continue;
                                auto it = frame.find({n, va});
                                if (it != frame.end() && it->second != pa) ++out.moved;
                                frame[{n, va}] = pa;
                            }
                    }
                };
                look();
                while (!s.finished()) {
                    for (unsigned n = 0; n < 2; ++n) {
                        Vm& vm = s.sys->node(n).vm;
                        wait_until(vm.compact_begin(512, sc_time_stamp()).done);
                        if (vm.migrating().open) wait_until(vm.compact_end(sc_time_stamp()).done);
                    }
                    look();
                    wait(20, SC_US);
                }
            });
            break;
    }
    s.run();
    if (std::getenv("VRDMASIM_TEST_STATS")) s.stats.write_text(std::cerr);
    REQUIRE(s.finished());
    out.f = physical_findings(*s.sys, s.stats);
    out.transfers = s.log().transfers.value();
    out.errors = s.log().errors.value();
    out.verified = s.log().bytes_verified.value();
    for (unsigned n = 0; n < 2; ++n) {
        const std::string p = "node" + std::to_string(n) + ".vm.";
        out.swap_outs += s.counter(p + "swap_outs");
        out.collapses += s.counter(p + "collapses");
        out.migrated += s.counter(p + "pages_migrated");
        out.collapse_tries += s.counter(p + "collapses") + s.counter(p + "collapse_skipped_pinned");
        out.compactions += s.counter(p + "compactions");
    }
    switch (sit) {   // the situation happened
        case Situation::Cold: break;
        case Situation::Swap: CHECK(out.reclaim_rounds > 0); break;
        case Situation::Thp: CHECK(out.collapse_tries > 0); break;
        case Situation::Migrate: CHECK(out.compactions > 0); break;
    }
    CHECK(out.transfers == count);
    CHECK(out.errors == 0);
    // Every check saw the engine's writes (the run's invariant).
    CHECK(s.counter("node1.frame_check.write_bytes") >= s.counter("node1.dma.bytes_received"));
    std::cerr << "physical " << strategy << " situation " << static_cast<int>(sit) << ": wrong transfers "
              << out.f.wrong_transfers << " wrong bytes " << out.f.wrong_bytes << " foreign writes "
              << out.f.foreign_writes << " (process " << out.f.foreign_bytes_other_process << " own "
              << out.f.foreign_bytes_own_other_page << " kernel " << out.f.foreign_bytes_kernel << " free "
              << out.f.foreign_bytes_free << ") stale reads " << out.f.stale_reads << " (" << out.f.stale_read_bytes
              << " B) swap_outs " << out.swap_outs << " collapses " << out.collapses << " migrated "
              << out.migrated << "\n";
    return out;
}

// A pinning strategy: pages may be pushed, collapsed or compacted around
// the buffers, but no frame the engine was handed moves: nothing found.
void pinned_case(const std::string& strategy, Situation sit) {
    const Outcome o = physical_case(strategy, sit);
    CHECK_FALSE(o.f.corruption());
    CHECK(o.f.wrong_bytes == 0);
    CHECK(o.f.foreign_writes == 0);
    CHECK(o.f.stale_reads == 0);
    CHECK(o.verified == o.total);
}

}  // namespace

#define PINNED_CASE(strategy, sit)                                                                        \
    TEST_CASE("physical addresses - " strategy " / " #sit ": no frame moves under a transfer", "[physical]") { \
        pinned_case(strategy, Situation::sit);                                                            \
    }
#define PINNED_ALL(strategy)        \
    PINNED_CASE(strategy, Cold)     \
    PINNED_CASE(strategy, Swap)     \
    PINNED_CASE(strategy, Thp)      \
    PINNED_CASE(strategy, Migrate)

PINNED_ALL("pin")
PINNED_ALL("pin-static")
PINNED_ALL("pin-cache")
PINNED_ALL("pin-deferred")
PINNED_ALL("pipeline")

// prefault: the library makes the pages present, pins nothing. What each
// situation does to the frames the engine was handed, as measured:
// reclaim frees the swapped pages' frames (writes land in free frames, the
// destination keeps its old bytes in swap; reads of freed source frames);
// a collapse copies the range into a new block while the engine still
// writes the old frames, which the kernel holds until the collapse ends,
// then frees; a migration likewise (old frame held by the kernel in the
// window, then free).
TEST_CASE("physical addresses - prefault / Swap: writes into freed frames and wrong bytes detected",
          "[physical][unpinned]") {
    const Outcome o = physical_case("prefault", Situation::Swap);
    CHECK(o.swap_outs > 0);
    CHECK(o.f.wrong_transfers > 0);
    CHECK(o.f.wrong_bytes > 0);
    CHECK(o.f.foreign_writes > 0);
    CHECK(o.f.foreign_bytes_free > 0);
    CHECK(o.f.stale_reads > 0);
    CHECK(o.verified < o.total);
}
TEST_CASE("physical addresses - prefault / Swap then another process takes the frames: its memory is written",
          "[physical][unpinned]") {
    const Outcome o = physical_case("prefault", Situation::Swap, true);
    CHECK(o.swap_outs > 0);
    CHECK(o.f.foreign_bytes_other_process > 0);
    CHECK(o.f.wrong_bytes > 0);
}
TEST_CASE("physical addresses - pin / Swap then another process takes the frames: nothing found", "[physical]") {
    const Outcome o = physical_case("pin", Situation::Swap, true);
    CHECK_FALSE(o.f.corruption());
    CHECK(o.verified == o.total);
}
TEST_CASE("physical addresses - prefault / Thp: writes into the kernel's old frames and wrong bytes detected",
          "[physical][unpinned]") {
    const Outcome o = physical_case("prefault", Situation::Thp);
    CHECK(o.collapses > 0);
    CHECK(o.f.wrong_transfers > 0);
    CHECK(o.f.wrong_bytes > 0);
    CHECK(o.f.foreign_bytes_kernel > 0);
    CHECK(o.f.stale_reads > 0);
}
TEST_CASE("physical addresses - prefault / Migrate: writes into migrated-away frames and wrong bytes detected",
          "[physical][unpinned]") {
    const Outcome o = physical_case("prefault", Situation::Migrate);
    CHECK(o.migrated > 0);
    CHECK(o.moved > 0);
    CHECK(o.f.wrong_transfers > 0);
    CHECK(o.f.wrong_bytes > 0);
    CHECK(o.f.foreign_bytes_kernel + o.f.foreign_bytes_free > 0);
}
// Cold buffers: the library's registration (MADV_POPULATE_WRITE) faults
// them in before it looks their frames up, and nothing moves them after:
// nothing to find, every byte verified.
TEST_CASE("physical addresses - prefault / Cold: registration faults the pages in and nothing moves",
          "[physical][unpinned]") {
    const Outcome o = physical_case("prefault", Situation::Cold);
    CHECK_FALSE(o.f.corruption());
    CHECK(o.verified == o.total);
}
