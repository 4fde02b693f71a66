// The physical-address experiment ("why pinning exists", docs/experiments.md):
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
// The agents that push pages out, drive khugepaged and compact are
// tests/fault_situations.hpp's. One simulation per TEST_CASE (SystemC allows one
// elaboration per process).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "fault_situations.hpp"
#include "src/sim/physical_engine.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr std::uint64_t kKiB = 1024;

using situations::Situation;
using situations::wait_until;

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
    // The matrix's stream (tests/fault_situations.hpp), physical addresses.
    const situations::Stream st = situations::stream(strategy, sit);
    const std::uint64_t total = st.total, count = st.count;
    SystemSim s(SystemSim::Defaults{{{"smmu.enabled", "false"}, {"rdma.pipeline-chunk", "32KiB"}}}, st.settings);
    Outcome out;
    out.total = total;
    // The situation's agent (tests/fault_situations.hpp) on both nodes: swap
    // 128 KiB out every 100 us (20 rounds at most; with `reuse`, a thief
    // process's 128 KiB after each node's reclaim); 4 KiB buffers advised
    // MADV_HUGEPAGE 50 us after the first post, then khugepaged every 50 us;
    // a filler first, then compaction every 20 us, buffer pages that changed
    // frame counted.
    situations::Effect effect;
    situations::Options opt;
    opt.swap_rounds = 20;
    int thief[2] = {0, 0};
    if (reuse) {
        opt.before_swapping = [&s, &thief] {
            for (unsigned n = 0; n < 2; ++n) thief[n] = s.sys->node(n).vm.create_process("thief");
        };
        opt.after_reclaim = [&thief](Vm& vm, std::size_t n) {
            const VmResult r = vm.mmap(thief[n], 128 * kKiB, Prot::ReadWrite, true, sc_time_stamp());
            REQUIRE(r.ok());
            wait_until(r.done);
        };
    }
    opt.track_moves = true;
    const auto agent = situations::start(s, sit, {0, 1}, effect, opt);
    s.run();
    if (std::getenv("VRDMASIM_TEST_STATS")) s.stats.write_text(std::cerr);
    REQUIRE(s.finished());
    out.f = physical_findings(*s.sys, s.stats);
    out.reclaim_rounds = sit == Situation::Swap ? effect.rounds : 0;
    out.moved = effect.pages_moved;
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
              << " B) swap_outs " << out.swap_outs << " collapses " << out.collapses << " migrated " << out.migrated
              << "\n";
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

}   // namespace

#define PINNED_CASE(strategy, sit)                                                                             \
    TEST_CASE("physical addresses - " strategy " / " #sit ": no frame moves under a transfer", "[physical]") { \
        pinned_case(strategy, Situation::sit);                                                                 \
    }
#define PINNED_ALL(strategy)    \
    PINNED_CASE(strategy, Cold) \
    PINNED_CASE(strategy, Swap) \
    PINNED_CASE(strategy, Thp)  \
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
