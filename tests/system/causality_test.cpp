// Causality of what software observes (issue: completion records seen before
// they were written). Through the whole system: the application's view of a
// transfer can never be ahead of the engine's, nor of the wire.
#include <catch2/catch.hpp>

#include <string>

#include "system_sim.hpp"

using namespace vrdmasim;

namespace {

const Histogram& histogram(SystemSim& s, const std::string& name) {
    const Histogram* h = s.stats.find_histogram(name);
    INFO("histogram " << name);
    REQUIRE(h != nullptr);
    return *h;
}

// 16 messages of 4 KiB, one at a time.
const Settings kOneAtATime = {
    {"workload.message-size", "4KiB"}, {"workload.total-bytes", "64KiB"}, {"workload.window", "1"}};

// 4 KiB = 16 packets of 256 B, each 18 flits of 16 B on the wire.
double serialisation_us(double gbps) { return 16.0 * 18 * 16 * 8 / (gbps * 1e3); }

}   // namespace

TEST_CASE("causality: the application never sees a transfer complete before the engine completed it",
          "[system][causality]") {
    SystemSim s(kOneAtATime);
    s.run();
    REQUIRE(s.finished());
    CHECK(s.counter("node0.rdma.early_completions") == 0);
    const Histogram& app = s.log().latency_us;   // post to completion seen
    const Histogram& engine = histogram(s, "node0.dma.transfer_latency");   // doorbell to record written
    REQUIRE(app.count() == 16);
    REQUIRE(engine.count() == 16);
    CHECK(app.min() >= engine.min());
    CHECK(app.mean() >= engine.mean());
}

TEST_CASE("causality: window 1 means one transfer in flight at a time", "[system][causality]") {
    SystemSim s(kOneAtATime);
    s.run();
    REQUIRE(s.finished());
    // Transfers one after another: their engine latencies add up to no more
    // than the span from the first post to the last completion.
    const Histogram& engine = histogram(s, "node0.dma.transfer_latency");
    const double span_us = (s.log().last_done - s.log().first_post).to_seconds() * 1e6;
    CHECK(engine.mean() * static_cast<double>(engine.count()) <= span_us);
}

TEST_CASE("causality: a 4 KiB message cannot complete faster than its serialisation", "[system][causality]") {
    SystemSim s(kOneAtATime);
    s.run();
    REQUIRE(s.finished());
    CHECK(s.log().latency_us.min() >= serialisation_us(16));
    CHECK(histogram(s, "node0.dma.transfer_latency").min() >= serialisation_us(16));
}

TEST_CASE("causality: over a 10 Gb/s link, 4 KiB messages stay under its payload ceiling", "[system][causality]") {
    SystemSim s(Settings{{"workload.message-size", "4KiB"},
                         {"workload.total-bytes", "256KiB"},
                         {"workload.window", "4"},
                         {"link.rate", "10Gbps"}});
    s.run();
    REQUIRE(s.finished());
    const TransferLog& l = s.log();
    const double span_s = (l.last_done - l.first_post).to_seconds();
    const double gbps = static_cast<double>(l.bytes_delivered.value()) * 8 / span_s / 1e9;
    CHECK(gbps <= 10.0 * 256 / 288);
    CHECK(s.log().latency_us.min() >= serialisation_us(10));
}
