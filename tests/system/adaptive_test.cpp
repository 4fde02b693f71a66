// Adaptive routing on a congested torus, whole system: the cluster workloads
// on 3x3 QFDBs with router.routing = adaptive, where packets of one
// transfer do arrive out of order at their receivers, with cold buffers
// (the engines fault on every first touch) in both SMMU fault modes, every
// byte verified; and the same workload with dimension order for contrast
// (no packet out of order, same hops). One simulation per TEST_CASE.
#include <catch2/catch.hpp>

#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;

namespace {

Settings torus(const std::string& routing, const std::string& kind, bool terminate) {
    // One round of the alltoall; 64 KiB each of the permutation.
    const Settings amount =
        kind == "alltoall" ? Settings{{"workload.iterations", "1"}} : Settings{{"workload.total-bytes", "64KiB"}};
    return amount + Settings{{"topology.kind", "torus"},
                             {"topology.x", "3"},
                             {"topology.y", "3"},
                             {"router.vcs", "3"},
                             {"router.routing", routing},
                             {"dram.size", "1GiB"},
                             {"workload.kind", kind},
                             {"workload.message-size", "16KiB"},
                             {"workload.window", "4"},
                             {"workload.populate", "false"},   // cold: every first touch faults in the SMMU
                             {"workload.fill-source", "false"},
                             {"smmu-driver.fault-mode", terminate ? "terminate" : "stall"},
                             // Adaptive routing needs the fault-tolerant engine's receiver
                             // (packets out of sequence), in stall mode too.
                             {"dma.fault-tolerant", terminate || routing == "adaptive" ? "true" : "false"},
                             {"sim.time-limit", "500ms"}};
}

struct Run {
    std::uint64_t out_of_order = 0, adaptive = 0, hops = 0, transfers = 0, nacks = 0;
};

Run run(const Settings& s, std::uint64_t expect_bytes, bool check_router_buffers = true) {
    SystemSim sim(s);
    sim.run();
    REQUIRE(sim.finished());
    CHECK(sim.log().errors.value() == 0);
    CHECK(sim.log().mismatches.value() == 0);
    CHECK(sim.log().bytes_delivered.value() == expect_bytes);
    CHECK(sim.log().bytes_verified.value() == expect_bytes);
    // The receivers' self-checks and the routers' buffers.
    CHECK(sim.stats.sum_counters("dma.rx_double_landings") == 0);
    CHECK(sim.stats.sum_counters("dma.rx_early_writes") == 0);
    if (check_router_buffers) CHECK(sim.stats.sum_counters("router.buffer_overflows") == 0);
    CHECK(sim.stats.sum_counters("smmu.cb0.faults_write") + sim.stats.sum_counters("smmu.cb0.faults_read") > 0);
    Run r;
    r.out_of_order = sim.stats.sum_counters("dma.rx_out_of_order");
    r.adaptive = sim.stats.sum_counters("router.adaptive_hops");
    r.transfers = sim.log().transfers.value();
    r.nacks = sim.stats.sum_counters("dma.nacks_sent");
    for (const auto& l : sim.sys->links()) r.hops += l->packets();
    return r;
}

// 36 nodes, each writes 16 KiB to every other: 36 x 35 transfers.
constexpr std::uint64_t kAlltoallBytes = 36ull * 35 * 16 * 1024;
// 36 nodes, each writes 64 KiB to its image.
constexpr std::uint64_t kPermutationBytes = 36ull * 64 * 1024;

}   // namespace

TEST_CASE("adaptive torus alltoall, cold buffers, terminate: out-of-order packets, NACKs, every byte once",
          "[adaptive][system]") {
    const Run r = run(torus("adaptive", "alltoall", true), kAlltoallBytes);
    CHECK(r.adaptive > 0);
    CHECK(r.out_of_order > 0);
    CHECK(r.nacks > 0);
}

TEST_CASE("adaptive torus alltoall, cold buffers, stall: out-of-order packets, every byte once", "[adaptive][system]") {
    const Run r = run(torus("adaptive", "alltoall", false), kAlltoallBytes);
    CHECK(r.adaptive > 0);
    CHECK(r.out_of_order > 0);
}

// KNOWN BUG (open), in the approximate time order only (exact order, the
// default, keeps no occupancy model apart from its credits, and the case
// above checks its buffers): in this run a router's input buffer is found
// holding more flits than it has: the upstream link's credits and the
// router's own occupancy model disagree under adaptive routing with stalled
// faults.
// It was there before the SMMU's fault registers were made to follow
// simulated time (the same run with workload.window = 3 or 5 overflowed
// then); that change moved it onto this configuration. A run now fails its
// `router-buffer` invariant when it happens (src/sim/invariants.cpp). This case
// fails while the bug is there ([!shouldfail]) and starts failing the suite
// once it is fixed: then drop the tag and the `false` above.
TEST_CASE("KNOWN BUG: adaptive torus alltoall, cold buffers, stall: a router buffer overflows",
          "[adaptive][system][!shouldfail]") {
    SystemSim sim(torus("adaptive", "alltoall", false) + Settings{{"router.link-order", "time-approximate"}});
    sim.run();
    REQUIRE(sim.finished());
    CHECK(sim.stats.sum_counters("router.buffer_overflows") == 0);
}

TEST_CASE("adaptive routing with the original engine is refused, naming dma.fault-tolerant", "[adaptive][system]") {
    // Its receiver marks a transfer whose packet comes out of sequence as
    // failed, and adaptive routing delivers them so (exit status 2, before
    // anything runs).
    Settings s = torus("adaptive", "alltoall", false);
    for (auto& kv : s)
        if (kv.first == "dma.fault-tolerant") kv.second = "false";
    CHECK_THROWS_WITH(SystemSim(s),
                      Catch::Contains("dma.fault-tolerant = false") && Catch::Contains("out of sequence"));
}

TEST_CASE("adaptive torus permutation, cold buffers, terminate: every byte once", "[adaptive][system]") {
    const Run r = run(torus("adaptive", "permutation", true), kPermutationBytes);
    CHECK(r.adaptive > 0);
}

TEST_CASE("dimension-order torus alltoall, cold buffers, terminate: nothing out of order", "[adaptive][system]") {
    const Run r = run(torus("dimension-order", "alltoall", true), kAlltoallBytes);
    CHECK(r.adaptive == 0);
    CHECK(r.out_of_order == 0);
}
