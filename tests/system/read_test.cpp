// RDMA read through the whole system (workload.operation = read): the
// figures workloads/README.md "RDMA read" quotes, against the same stream as
// writes, and the configurations it refuses. The fault situations are in
// strategy_test.cpp (the read matrix).
#include <catch2/catch.hpp>

#include "system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

using Sim = SystemSim;

// The median of a histogram that must exist.
double p50(const Sim& s, const std::string& name) {
    const Histogram* h = s.stats.find_histogram(name);
    INFO("histogram " << name);
    REQUIRE(h != nullptr);
    return h->quantile(0.5);
}

Settings latency_run(const char* op) {
    return {{"workload.message-size", "4KiB"},
            {"workload.window", "1"},
            {"workload.total-bytes", "1MiB"},
            {"workload.operation", op}};
}

void all_verified(Sim& s, std::uint64_t bytes) {
    REQUIRE(s.finished());
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.log().bytes_delivered.value() == bytes);
    CHECK(s.log().bytes_verified.value() == bytes);
}

}  // namespace

TEST_CASE("read vs write: a 4 KiB read one at a time, latency as the README quotes", "[system][read]") {
    Sim s(latency_run("read"));
    s.run();
    all_verified(s, 1u << 20);
    CHECK(s.log().latency_us.quantile(0.5) == Approx(4.17).margin(0.01));
    CHECK(p50(s, "node1.dma.read_latency") == Approx(3.90).margin(0.01));
    // dst-node initiated every read, src-node served them without records.
    CHECK(s.counter("node1.dma.reads_posted") == 256);
    CHECK(s.counter("node1.dma.read_bytes") == 1u << 20);
    CHECK(s.counter("node0.dma.read_requests_served") == 256);
    CHECK(s.counter("node0.dma.transfers_posted") == 0);
    CHECK(s.counter("node0.dma.bytes_sent") == 1u << 20);
    CHECK(s.counter("node1.dma.bytes_received") == 1u << 20);
}

TEST_CASE("read vs write: a 4 KiB write one at a time, latency as the README quotes", "[system][read]") {
    Sim s(latency_run("write"));
    s.run();
    all_verified(s, 1u << 20);
    CHECK(s.log().latency_us.quantile(0.5) == Approx(4.17).margin(0.01));
    CHECK(p50(s, "node0.dma.transfer_latency") == Approx(3.87).margin(0.01));
    CHECK(s.counter("node0.dma.reads_posted") == 0);
    CHECK(s.counter("node1.dma.read_requests") == 0);
}

TEST_CASE("read vs write: 1 MiB reads stream at the link's rate, as the README quotes", "[system][read]") {
    Sim s({{"workload.message-size", "1MiB"}, {"workload.operation", "read"}});
    s.run();
    all_verified(s, 16u << 20);
    const double gbps = (16u << 20) * 8.0 / (s.log().last_done - s.log().first_post).to_seconds() / 1e9;
    CHECK(gbps == Approx(12.69).margin(0.01));
}

TEST_CASE("read: workload.operation = read is refused for workloads without a read form", "[system][read]") {
    try {
        Sim s({{"workload.kind", "pingpong"}, {"workload.operation", "read"}});
        FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        const std::string msg = e.what();
        CHECK(msg.find("workload.operation") != std::string::npos);
        CHECK(msg.find("pingpong") != std::string::npos);
    }
}
