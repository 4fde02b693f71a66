// How a node of a cluster workload learns that a round's writes addressed
// to it have landed (workload.arrivals): the notification ring, the event
// counter, or the classic per-peer flags; every byte checked, in the VM's
// fault situations, and the flags' causality (a round is never seen complete
// before its writes completed).
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "fault_situations.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/cluster.hpp"

using namespace vrdmasim;
using namespace sc_core;
using situations::Situation;

namespace {

struct Sim : SystemSim {
    // One QFDB of four nodes unless a test says otherwise.
    explicit Sim(const Settings& s) : SystemSim(Defaults{{{"topology.nodes", "4"}}}, s) {}
    ClusterWorkload& cluster() { return dynamic_cast<ClusterWorkload&>(sys->workload()); }
    // No link busier than the workload's span (the flags' traffic is in it).
    void check_links_within_span() {
        const double span_us = (log().last_done - log().first_post).to_seconds() * 1e6;
        for (const auto& l : sys->links()) CHECK(l->busy_us() <= span_us * (1 + 1e-9));
    }
    std::uint64_t notifications() const { return stats.sum_counters("dma.notifications"); }
    const Histogram& waits() const {
        const Histogram* h = stats.find_histogram("workload.arrival_wait");
        REQUIRE(h != nullptr);
        return *h;
    }
};

}   // namespace

TEST_CASE("arrivals = flags: alltoall - one flag per destination and round, no notification, every byte verified",
          "[cluster][arrivals]") {
    Sim s({{"workload.kind", "alltoall"},
           {"workload.message-size", "16KiB"},
           {"workload.iterations", "3"},
           {"workload.window", "2"},
           {"workload.arrivals", "flags"}});
    CHECK(s.cluster().arrival_state_bytes(0) == 3 * 8);   // a flag per source
    s.run();
    s.check_all_verified(4 * 3 * 3, 4 * 3 * 3 * 16 * 1024);
    CHECK(s.counter("workload.flag_writes") == 4 * 3 * 3);
    CHECK(s.notifications() == 0);
    // Each flag read at least once per round, by each of the 4 nodes.
    CHECK(s.counter("workload.flag_loads") >= 4 * 3 * 3);
    CHECK(s.counter("workload.early_arrivals") == 0);
    CHECK(s.waits().count() == 4 * 3);   // one wait per node and round
    const Histogram* delay = s.stats.find_histogram("workload.flag_detect_delay");
    REQUIRE(delay != nullptr);
    CHECK(delay->count() == 4 * 3);
    CHECK(s.scalar("workload.arrival_state_bytes") == 24);
    s.check_links_within_span();
    // The flag writes are engine transfers too, 8 B each.
    CHECK(s.stats.sum_counters("dma.transfers_completed") == 4 * 3 * 3 * 2);
}

TEST_CASE("arrivals = counter: incast - the receiver polls one register, 16 B of state whatever the senders",
          "[cluster][arrivals]") {
    Sim s({{"workload.kind", "incast"},
           {"workload.dst-node", "2"},
           {"workload.total-bytes", "128KiB"},
           {"workload.message-size", "16KiB"},
           {"workload.arrivals", "counter"}});
    s.run();
    s.check_all_verified(3 * 8, 3 * 128 * 1024);
    CHECK(s.stats.sum_counters("dma.counter_increments") == 3 * 8);
    CHECK(s.notifications() == 0);   // counted, no record
    CHECK(s.scalar("workload.arrival_state_bytes") == 16);
    CHECK(s.counter("workload.flag_writes") == 0);
    CHECK(s.waits().count() == 1);   // the receiver's one round; the senders receive nothing
    // No ring: the engine wrote no notification record.
    CHECK(s.counter("node2.dma.record_retries") == 0);
}

TEST_CASE("arrivals = counter: alltoall over rounds - each round counts on the counter of its parity",
          "[cluster][arrivals]") {
    Sim s({{"workload.kind", "alltoall"},
           {"workload.message-size", "16KiB"},
           {"workload.iterations", "3"},
           {"workload.window", "2"},
           {"workload.arrivals", "counter"}});
    s.run();
    s.check_all_verified(4 * 3 * 3, 4 * 3 * 3 * 16 * 1024);
    // Every write counted once on its receiver, on counter 0 (rounds 0, 2)
    // or 1 (round 1); no ring record, no flag.
    CHECK(s.stats.sum_counters("dma.counter_increments") == 4 * 3 * 3);
    CHECK(s.notifications() == 0);
    CHECK(s.counter("workload.flag_writes") == 0);
    for (unsigned n = 0; n < 4; ++n) {
        Node& node = s.sys->node(n);
        CHECK(node.dma.counter_signal(node.app.channel()).raised() == 3 * 3);
    }
    CHECK(s.waits().count() == 4 * 3);
}

TEST_CASE("arrivals = counter needs two event counters per channel", "[cluster][arrivals]") {
    REQUIRE_THROWS_AS(
        Sim({{"workload.kind", "alltoall"}, {"workload.arrivals", "counter"}, {"dma.event-counters", "1"}}),
        ConfigError);
}

TEST_CASE("arrivals is for one-sided cluster workloads: with two-sided it is refused", "[cluster][arrivals]") {
    REQUIRE_THROWS_AS(
        Sim({{"workload.kind", "alltoall"}, {"workload.two-sided", "true"}, {"workload.arrivals", "flags"}}),
        ConfigError);
}

TEST_CASE("arrivals = flags: the flag state grows with the peers (incast: 8 B per sender at the receiver)",
          "[cluster][arrivals]") {
    Sim s({{"workload.kind", "incast"},
           {"workload.dst-node", "0"},
           {"workload.total-bytes", "32KiB"},
           {"workload.message-size", "8KiB"},
           {"workload.arrivals", "flags"}});
    CHECK(s.cluster().arrival_state_bytes(0) == 3 * 8);
    CHECK(s.cluster().arrival_state_bytes(1) == 0);   // a sender receives nothing
    s.run();
    s.check_all_verified(3 * 4, 3 * 32 * 1024);
    CHECK(s.counter("workload.flag_writes") == 3);
    CHECK(s.counter("workload.early_arrivals") == 0);
    s.check_links_within_span();
}

namespace {

// The flags and the counters in a fault situation: the data and
// the flags live in memory the VM pages, so the engine's writes of both
// fault; every byte still verifies and no round is seen early.
void situation_case(const std::string& arrivals, Situation sit, bool stall) {
    Settings set{{"workload.kind", "alltoall"},
                 {"workload.message-size", "64KiB"},
                 {"workload.iterations", "3"},
                 {"workload.window", "2"},
                 {"workload.arrivals", arrivals},
                 {"rdma.strategy", "fault-tolerant"},
                 {"smmu-driver.fault-mode", stall ? "stall" : "terminate"},
                 {"dma.fault-tolerant", stall ? "false" : "true"},
                 {"sim.time-limit", "500ms"}};
    for (const auto& kv : situations::settings(sit)) set.push_back(kv);
    Sim s(set);
    situations::Effect effect;
    const auto agent = situations::start(s, sit, {0, 1, 2, 3}, effect);
    s.run();
    INFO("situation " << situations::name(sit) << ", " << (stall ? "stall" : "terminate"));
    const std::uint64_t transfers = 4 * 3 * 3;
    s.check_all_verified(transfers, transfers * 64 * 1024);
    CHECK(s.counter("workload.early_arrivals") == 0);
    if (sit == Situation::Cold) {
        // Cold buffers: the engine's accesses faulted.
        CHECK(s.stats.sum_counters("faults_read") + s.stats.sum_counters("faults_write") > 0);
    } else {
        CHECK(effect.rounds > 0);
    }
}

}   // namespace

#define ARRIVALS_CASE(arr, sit)                                                                                 \
    TEST_CASE("arrivals = " arr " in a fault situation: " #sit " - terminate", "[cluster][arrivals][faults]") { \
        situation_case(arr, Situation::sit, false);                                                             \
    }                                                                                                           \
    TEST_CASE("arrivals = " arr " in a fault situation: " #sit " - stall", "[cluster][arrivals][faults]") {     \
        situation_case(arr, Situation::sit, true);                                                              \
    }

ARRIVALS_CASE("flags", Cold)
ARRIVALS_CASE("flags", Swap)
ARRIVALS_CASE("flags", Thp)
ARRIVALS_CASE("flags", Migrate)
ARRIVALS_CASE("counter", Cold)
ARRIVALS_CASE("counter", Swap)
ARRIVALS_CASE("counter", Thp)
ARRIVALS_CASE("counter", Migrate)
