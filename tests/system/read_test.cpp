// RDMA read through the whole system (workload.operation = read): the
// figures docs/rdma.md "RDMA read" quotes, against the same stream as
// writes, and the configurations it refuses. The fault situations are in
// strategy_test.cpp (the read matrix).
#include <catch2/catch.hpp>

#include "src/sim/system.hpp"
#include "system_sim.hpp"

#include <stdexcept>
#include <vector>

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

}   // namespace

TEST_CASE("read vs write: a 4 KiB read one at a time, latency as the README quotes", "[system][read]") {
    Sim s(latency_run("read"));
    s.run();
    all_verified(s, 1u << 20);
    CHECK(s.log().latency_us.quantile(0.5) == Approx(4.22).margin(0.01));
    CHECK(p50(s, "node1.dma.read_latency") == Approx(3.92).margin(0.01));
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
    CHECK(p50(s, "node0.dma.transfer_latency") == Approx(3.89).margin(0.01));
    CHECK(s.counter("node0.dma.reads_posted") == 0);
    CHECK(s.counter("node1.dma.read_requests") == 0);
}

TEST_CASE("read vs write: 1 MiB reads stream at the link's rate, as the README quotes", "[system][read]") {
    Sim s({{"workload.message-size", "1MiB"}, {"workload.operation", "read"}});
    s.run();
    all_verified(s, 16u << 20);
    const double gbps = (16u << 20) * 8.0 / (s.log().last_done - s.log().first_post).to_seconds() / 1e9;
    CHECK(gbps == Approx(14.09).margin(0.01));
}

TEST_CASE("read: workload.operation = read is refused where it has no read form", "[system][read]") {
    try {
        Sim s({{"workload.kind", "fileserve"},
               {"workload.operation", "read"},
               {"fs.files", "1"},
               {"fileserve.method", "kernel-copy"}});
        FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        // A socket pushes its packets: the client cannot read the server's socket buffer.
        const std::string msg = e.what();
        CHECK(msg.find("workload.operation") != std::string::npos);
        CHECK(msg.find("fileserve.method = kernel-copy") != std::string::npos);
    }
}

// pingpong's read form: src-node reads dst-node's buffer `iterations` times,
// one at a time (osu_get_latency); its latency is each read's, the same
// figure as the stream's read latency for the same message one at a time.
TEST_CASE("read: pingpong reads one message at a time and samples each read", "[system][read]") {
    Sim s({{"workload.kind", "pingpong"},
           {"workload.operation", "read"},
           {"workload.message-size", "4KiB"},
           {"workload.iterations", "20"}});
    s.run();
    all_verified(s, 20 * 4096);
    CHECK(s.log().transfers.value() == 20);
    CHECK(s.counter("node0.dma.reads_posted") == 20);
    CHECK(s.counter("node1.dma.reads_posted") == 0);
    CHECK(s.log().latency_us.quantile(0.5) == Approx(4.22).margin(0.01));   // as the stream's one at a time
}

TEST_CASE("read: a program mixing reads and writes gets each operation it posts", "[system][read]") {
    // The library writes DESC_OP only when the operation changes: a write
    // after a read must be staged as a write again, or it would run as a read.
    Sim s({{"workload.total-bytes", "4KiB"}, {"workload.message-size", "4KiB"}, {"sim.time-limit", "5ms"}});
    RdmaProcess& a0 = s.sys->node(0).app;
    RdmaProcess& a1 = s.sys->node(1).app;
    const std::uint64_t len = 4096;
    std::vector<unsigned char> p1(len), p2(len), p3(len);
    fill_pattern(p1.data(), len, 101);
    fill_pattern(p2.data(), len, 102);
    fill_pattern(p3.data(), len, 103);
    std::uint64_t src0 = 0, dst0 = 0, src0b = 0;
    bool mapped = false, done = false;
    sc_event mapped_ev;
    a0.program = [&](RdmaProcess& app) {
        src0 = app.alloc(len);
        dst0 = app.alloc(len);
        src0b = app.alloc(len);
        REQUIRE(app.debug_write(src0, p1.data(), len));
        REQUIRE(app.debug_write(src0b, p3.data(), len));
        mapped = true;
        mapped_ev.notify(app.now() - sc_time_stamp());
    };
    a1.program = [&](RdmaProcess& app) {
        const std::uint64_t buf = app.alloc(len), buf2 = app.alloc(len), rec = app.alloc_locked(3 * 32);
        REQUIRE(app.debug_write(buf2, p2.data(), len));
        app.wait_until([&] { return mapped; }, mapped_ev);
        REQUIRE(app.post_read(0, src0, buf, len, 1, rec));
        CHECK(app.wait_record(rec).status == kStatusOk);
        REQUIRE(app.post_write(buf2, 0, dst0, len, 2, rec + 32, 0));
        CHECK(app.wait_record(rec + 32).status == kStatusOk);
        REQUIRE(app.post_read(0, src0b, buf2, len, 3, rec + 64));
        CHECK(app.wait_record(rec + 64).status == kStatusOk);
        std::vector<unsigned char> got(len);
        REQUIRE(app.debug_read(buf, got.data(), len));
        CHECK(got == p1);
        REQUIRE(app.debug_read(buf2, got.data(), len));
        CHECK(got == p3);
        CHECK_THROWS_AS(app.post_read(0, src0, buf, len, 4, rec, kFlagNotify), std::invalid_argument);
        CHECK_THROWS_AS(app.post_read(1, buf, buf2, len, 4, rec), std::invalid_argument);
        done = true;
    };
    s.run();
    REQUIRE(done);
    std::vector<unsigned char> got(len);
    REQUIRE(a0.debug_read(dst0, got.data(), len));
    CHECK(got == p2);   // the write landed at node 0
    CHECK(s.counter("node1.dma.reads_posted") == 2);
    CHECK(s.counter("node1.dma.transfers_posted") == 3);
    CHECK(s.counter("node0.dma.read_requests_served") == 2);
    CHECK(s.counter("node0.dma.bytes_received") == len);
    CHECK(s.counter("node1.dma.bytes_received") == 2 * len);
}
