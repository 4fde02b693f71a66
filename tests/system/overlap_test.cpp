// The overlap workload and rdma.buffer-guard in the whole system: the
// unguarded race is real and caught (and nothing is caught without
// touches), the guard keeps the program off every buffer in flight at the
// cost of its faults, blocking hides nothing; and guarded and unguarded runs
// in the fault situations of the strategies (cold buffers, swap, THP
// collapse, migration; stall and terminate), RDMA writes and reads.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "fault_situations.hpp"
#include "src/sim/invariants.hpp"
#include "system_sim.hpp"
#include "workloads/overlap.hpp"

using namespace vrdmasim;
using namespace vrdmasim::situations;

namespace {

const SystemSim::Defaults kBase{{{"workload.kind", "overlap"},
                                 {"workload.message-size", "64KiB"},
                                 {"workload.iterations", "12"},
                                 {"overlap.phases", "4"},
                                 {"overlap.compute", "5us"},
                                 {"overlap.touch-probability", "0.5"}}};

struct Run {
    std::uint64_t corrupted = 0, inflight = 0, touches = 0, faults = 0, installs = 0, lifted = 0;
    double overlap = 0, end_to_end = 0;
};

// Every transfer finished ok and every byte delivered was either verified
// or found corrupted by the program's race; the run's invariants hold.
Run checked(SystemSim& s, std::uint64_t iterations, std::uint64_t msg = 64 * 1024) {
    s.run();
    if (std::getenv("VRDMASIM_TEST_STATS")) s.stats.write_text(std::cerr);
    REQUIRE(s.finished());
    const auto* o = dynamic_cast<const OverlapWorkload*>(&s.sys->workload());
    REQUIRE(o);
    Run r;
    r.corrupted = s.counter("workload.overlap.corrupted_transfers");
    r.inflight = s.counter("workload.overlap.inflight_touches");
    r.touches = s.counter("workload.overlap.touches");
    r.overlap = s.stats.find_scalar("workload.overlap.overlap")->value();
    r.end_to_end = s.stats.find_scalar("workload.overlap.end_to_end")->value();
    r.faults = s.stats.sum_counters("rdma.guard.faults");
    r.installs = s.stats.sum_counters("rdma.guard.installed");
    r.lifted = s.stats.sum_counters("rdma.guard.lifted");
    CHECK(s.log().transfers.value() == iterations);
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.log().bytes_delivered.value() == iterations * msg);
    CHECK(s.log().bytes_verified.value() + o->raced_bytes() == s.log().bytes_delivered.value());
    CHECK(o->raced_bytes() == r.corrupted * msg);
    CHECK(r.installs == r.lifted);
    const auto v = s.self_check();
    INFO(describe(v));
    CHECK(v.empty());
    return r;
}

}   // namespace

TEST_CASE("overlap unguarded: stores into the source in flight corrupt transfers and the check catches them",
          "[overlap]") {
    SystemSim s(kBase, {{"overlap.touch-probability", "1"}});
    const Run r = checked(s, 12);
    CHECK(r.touches == 12 * 4);
    CHECK(r.inflight > 0);
    CHECK(r.corrupted > 0);
    CHECK(r.corrupted <= 12);
    CHECK(r.faults == 0);
    CHECK(r.installs == 0);
    CHECK(s.stats.find_counter("node0.rdma.guard.faults") == nullptr);   // no guard at all
    // Unguarded, the compute hides all it can: up to its own share of the
    // transfer time (4 x 5 us against a 64 KiB write of about 43 us).
    const double c = s.stats.find_scalar("workload.overlap.compute_time")->value();
    const double x = s.stats.find_scalar("workload.overlap.transfer_time")->value();
    CHECK(r.overlap <= c / x + 1e-9);
    CHECK(r.overlap > 0.9 * c / x);
}

TEST_CASE("overlap unguarded reads: stores into the destination in flight are caught", "[overlap]") {
    SystemSim s(kBase, {{"overlap.touch-probability", "1"}, {"workload.operation", "read"}});
    const Run r = checked(s, 12);
    CHECK(r.inflight > 0);
    CHECK(r.corrupted > 0);
}

TEST_CASE("overlap unguarded with touch probability 0: nothing to catch", "[overlap]") {
    SystemSim s(kBase, {{"overlap.touch-probability", "0"}});
    const Run r = checked(s, 12);
    CHECK(r.touches == 0);
    CHECK(r.corrupted == 0);
    CHECK(s.log().bytes_verified.value() == 12 * 64 * 1024);
}

TEST_CASE("overlap guarded: every store into a buffer in flight faults and waits and nothing is corrupted",
          "[overlap]") {
    SystemSim s(kBase, {{"overlap.touch-probability", "1"}, {"rdma.buffer-guard", "mprotect"}});
    const Run r = checked(s, 12);
    CHECK(r.corrupted == 0);
    CHECK(r.inflight == 0);
    CHECK(r.installs == 12);
    CHECK(r.faults > 0);
    CHECK(r.faults <= 12);   // one per transfer at most: the first touch waits until it completes
    CHECK(s.log().bytes_verified.value() == 12 * 64 * 1024);
    CHECK(s.stats.find_scalar("node0.rdma.guard.mprotect_time")->value() > 0);
}

// workload.two-sided: the same program with isend and the target's irecv
// (64 KiB: rendezvous). Unguarded, the stores race the library's transfer
// of the send buffer and the receiver's copy is checked against them;
// guarded, the two-sided library protects the buffer from isend to the
// request's completion and a touch waits for it.
TEST_CASE("overlap two-sided unguarded: stores into the send buffer in flight are caught", "[overlap][two-sided]") {
    SystemSim s(kBase, {{"overlap.touch-probability", "1"}, {"workload.two-sided", "true"}});
    const Run r = checked(s, 12);
    CHECK(r.touches == 12 * 4);
    CHECK(r.inflight > 0);
    CHECK(r.corrupted > 0);
    CHECK(r.installs == 0);
    CHECK(s.stats.sum_counters("msg.rendezvous_sends") == 12);
}

TEST_CASE("overlap two-sided guarded: the isend buffer is protected until the request completes",
          "[overlap][two-sided]") {
    SystemSim s(
        kBase, {{"overlap.touch-probability", "1"}, {"workload.two-sided", "true"}, {"rdma.buffer-guard", "mprotect"}});
    const Run r = checked(s, 12);
    CHECK(r.corrupted == 0);
    CHECK(r.inflight == 0);
    CHECK(r.faults > 0);
    CHECK(r.faults <= 12);
    CHECK(s.log().bytes_verified.value() == 12 * 64 * 1024);
}

TEST_CASE("overlap two-sided eager: small messages copied at isend, checked", "[overlap][two-sided]") {
    SystemSim s(
        kBase, {{"overlap.touch-probability", "1"}, {"workload.two-sided", "true"}, {"workload.message-size", "1KiB"}});
    const Run r = checked(s, 12, 1024);
    CHECK(s.stats.sum_counters("msg.eager_sends") == 12);
    CHECK(r.touches == 12 * 4);
}

// Two processes per node, each its own overlap job, racing its own buffers:
// every job's figures are its own (jobP.workload.overlap.*), each fraction
// in [0, 1] (the summary shows job 0's: a fraction does not add up).
TEST_CASE("overlap with two processes per node: each job races, is checked and measured on its own",
          "[overlap][procs]") {
    SystemSim s(kBase, {{"overlap.touch-probability", "1"}, {"node.processes", "2"}});
    s.run();
    REQUIRE(s.finished());
    REQUIRE(s.sys->workloads().size() == 2);
    for (const auto& w : s.sys->workloads()) {
        const std::string p = Workload::stats_prefix(w->job());
        INFO(p);
        const auto* o = dynamic_cast<const OverlapWorkload*>(w.get());
        REQUIRE(o);
        const TransferLog& l = w->log();
        CHECK(l.errors.value() == 0);
        CHECK(l.mismatches.value() == 0);
        CHECK(l.bytes_verified.value() + o->raced_bytes() == l.bytes_delivered.value());
        CHECK(s.counter(p + "overlap.corrupted_transfers") > 0);
        const double f = s.stats.find_scalar(p + "overlap.overlap")->value();
        CHECK(f >= 0);
        CHECK(f <= 1);
    }
    const auto v = s.self_check();
    INFO(describe(v));
    CHECK(v.empty());
}

TEST_CASE("overlap blocking: no overlap and no race", "[overlap]") {
    SystemSim s(kBase, {{"overlap.touch-probability", "1"}, {"overlap.mode", "blocking"}});
    const Run r = checked(s, 12);
    CHECK(r.corrupted == 0);
    CHECK(r.inflight == 0);
    CHECK(r.overlap == 0.0);
}

TEST_CASE("overlap: bad settings are refused before simulation", "[overlap]") {
    // The lock workload has no application buffer in flight to guard.
    CHECK_THROWS_AS(SystemSim(kBase, {{"rdma.buffer-guard", "mprotect"}, {"workload.kind", "lock"}}), ConfigError);
    CHECK_THROWS_AS(SystemSim(kBase, {{"rdma.buffer-guard", "mprotect"}, {"smmu.enabled", "false"}}), ConfigError);
    CHECK_THROWS_AS(SystemSim(kBase, {{"overlap.touch-probability", "1.5"}}), ConfigError);
}

TEST_CASE("overlap: messages shorter than a store are refused", "[overlap]") {
    CHECK_THROWS_AS(SystemSim(kBase, {{"workload.message-size", "4B"}}), ConfigError);
}

namespace {

enum class Mode { Stall, Terminate };

void situation_case(bool guarded, bool read, Situation sit, Mode mode) {
    Settings st = settings(sit);
    st.push_back({"smmu-driver.fault-mode", mode == Mode::Stall ? "stall" : "terminate"});
    st.push_back({"rdma.buffer-guard", guarded ? "mprotect" : "none"});
    st.push_back({"workload.operation", read ? "read" : "write"});
    // THP: buffers that are whole 2 MiB ranges (khugepaged collapses only
    // those); migration: 1 MiB, running over into a block with no page
    // table (compaction moves pages only out of such blocks), as the
    // strategy tests do. The compute phases span the transfer.
    std::uint64_t msg = 64 * 1024, iterations = 24;
    const char* compute = "20us";
    if (sit == Situation::Thp) msg = 2048 * 1024, iterations = 6, compute = "300us";
    if (sit == Situation::Migrate) msg = 1024 * 1024, iterations = 8, compute = "150us";
    st.push_back({"workload.message-size", std::to_string(msg)});
    st.push_back({"workload.iterations", std::to_string(iterations)});
    st.push_back({"overlap.compute", compute});
    SystemSim s(kBase, st);
    Effect effect;
    auto agent = start(s, sit, {0, 1}, effect);
    const Run r = checked(s, iterations, msg);
    if (guarded) {
        CHECK(r.corrupted == 0);
        CHECK(r.inflight == 0);
        CHECK(r.installs == iterations);
        CHECK(r.faults > 0);
    } else {
        CHECK(r.faults == 0);
        CHECK(r.installs == 0);
    }
    const std::uint64_t smmu_faults = s.stats.sum_counters("faults_read") + s.stats.sum_counters("faults_write");
    switch (sit) {
    case Situation::Cold: CHECK(smmu_faults > 0); break;   // the engine met absent pages, guarded or not
    case Situation::Swap: CHECK(s.stats.sum_counters("vm.swap_outs") > 0); break;
    case Situation::Thp: CHECK(s.stats.sum_counters("vm.collapses") > 0); break;
    case Situation::Migrate: CHECK(s.stats.sum_counters("vm.pages_migrated") > 0); break;
    }
    CHECK((sit == Situation::Cold || effect.rounds > 0));
}

}   // namespace

#define OVERLAP_SIT(g, op, sit, mode)                                                                         \
    TEST_CASE("overlap " #g " " #op " / " #sit " / " #mode ": every byte verified or caught",                 \
              "[overlap][situations]") {                                                                      \
        situation_case(std::string(#g) == "guarded", std::string(#op) == "read", Situation::sit, Mode::mode); \
    }
#define OVERLAP_ALL(g, op)              \
    OVERLAP_SIT(g, op, Cold, Stall)     \
    OVERLAP_SIT(g, op, Cold, Terminate) \
    OVERLAP_SIT(g, op, Swap, Stall)     \
    OVERLAP_SIT(g, op, Swap, Terminate) \
    OVERLAP_SIT(g, op, Thp, Stall)      \
    OVERLAP_SIT(g, op, Thp, Terminate)  \
    OVERLAP_SIT(g, op, Migrate, Stall)  \
    OVERLAP_SIT(g, op, Migrate, Terminate)
OVERLAP_ALL(guarded, write)
OVERLAP_ALL(guarded, read)
OVERLAP_ALL(unguarded, write)
OVERLAP_ALL(unguarded, read)

// The figures docs/workloads.md quotes for configs/overlap/base.ini (64 KiB,
// touch probability 0.25, 200 iterations): unguarded and guarded.
const Settings kReadmeBase{{"workload.kind", "overlap"},   {"workload.message-size", "64KiB"},
                           {"workload.iterations", "200"}, {"overlap.touch-probability", "0.25"},
                           {"overlap.phases", "4"},        {"overlap.compute", "5us"}};

TEST_CASE("overlap README figures: 64 KiB unguarded at p = 0.25", "[overlap][readme]") {
    SystemSim s(kReadmeBase);
    const Run r = checked(s, 200);
    CHECK(r.inflight == 175);
    CHECK(r.corrupted == 77);
    CHECK(r.end_to_end == Approx(7807.32).epsilon(1e-5));
    CHECK(r.overlap == Approx(0.510201).epsilon(1e-4));
}

TEST_CASE("overlap README figures: 64 KiB guarded at p = 0.25", "[overlap][readme]") {
    Settings st = kReadmeBase;
    st.push_back({"rdma.buffer-guard", "mprotect"});
    SystemSim s(st);
    const Run r = checked(s, 200);
    CHECK(r.faults == 118);
    CHECK(r.corrupted == 0);
    CHECK(r.end_to_end == Approx(11327.16).epsilon(1e-5));
    CHECK(r.overlap == Approx(0.201148).epsilon(1e-4));
    CHECK(s.stats.sum_scalars("rdma.guard.mprotect_time") == Approx(1923.2).epsilon(1e-4));
}
