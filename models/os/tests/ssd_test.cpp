// Ssd: the swap device. Plain sc_time arithmetic, no simulation: exact
// completion times for single commands, the queue-depth limit and the shared
// channel, real bytes through swap slots, slot allocation and its errors.
//
// Most cases use read latency 10 us, write latency 20 us and 4096 MB/s, so one
// 4 KiB page occupies the channel exactly 1 us.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <systemc>

#include "model_env.hpp"
#include "models/os/cpu.hpp"
#include "models/os/ssd.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

using vrdmasim_test::Settings;

sc_time us(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e6 + 0.5)); }
sc_time ps(sc_dt::uint64 v) { return sc_time::from_value(v); }
using Page = std::array<unsigned char, Ssd::kPage>;

const vrdmasim_test::ParamDecls kOsParams = {CpuCores::declare_params, Ssd::declare_params};

ParamRegistry os_params() { return vrdmasim_test::params_of(kOsParams); }

// The round-number timing of most cases (see the top).
const Settings kRound = {{"ssd.read-latency", "10us"}, {"ssd.write-latency", "20us"}, {"ssd.bandwidth", "4096MB/s"}};

struct SsdEnv : vrdmasim_test::ModelEnv {
    explicit SsdEnv(const Settings& settings = {}, bool round = true)
        : ModelEnv(kOsParams, round ? kRound : Settings{}, settings) {}
};

Page pattern(unsigned seed) {
    Page p;
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = static_cast<unsigned char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
    return p;
}

// A slot holding `seed`'s pattern, written at time 0.
std::uint64_t written_slot(Ssd& ssd, unsigned seed) {
    const auto slot = ssd.alloc_slot();
    REQUIRE(slot);
    const Page p = pattern(seed);
    ssd.write_page(*slot, p.data(), sc_core::SC_ZERO_TIME);
    return *slot;
}

}   // namespace

TEST_CASE("ssd: parameters and their defaults", "[os][ssd]") {
    ParamRegistry reg = os_params();
    for (const char* k :
         {"ssd.read-latency", "ssd.write-latency", "ssd.bandwidth", "ssd.queue-depth", "ssd.swap-size"}) {
        const ParamDecl* d = reg.find(k);
        REQUIRE(d);
        CHECK_FALSE(d->help.empty());
        CHECK(d->has_min);
    }
    CHECK(reg.find("ssd.read-latency")->help.find("estimate") != std::string::npos);
    Config cfg(reg);
    CHECK(cfg.time("ssd.read-latency") == us(50));
    CHECK(cfg.time("ssd.write-latency") == us(20));
    CHECK(cfg.rate_bps("ssd.bandwidth") == 12e9);
    CHECK(cfg.integer("ssd.queue-depth") == 32);
    CHECK(cfg.size("ssd.swap-size") == 4ULL << 30);
    CHECK_THROWS_AS(cfg.set("ssd.queue-depth", "0", "test"), ConfigError);
    CHECK_THROWS_AS(cfg.set("ssd.swap-size", "1KiB", "test"), ConfigError);
}

TEST_CASE("ssd: a single read takes latency + 4096 B / bandwidth (defaults)", "[os][ssd][timing]") {
    SsdEnv env({}, false);
    Ssd ssd(env.ctx, "node0.ssd", "node0");
    CHECK(ssd.free_slots() == (4ULL << 30) / 4096);
    const std::uint64_t slot = written_slot(ssd, 1);   // write: 20 us + 2.730667 us
    Page out{};
    // 4096 B at 1.5 GB/s = 2730.667 ns, rounded to 2730667 ps.
    const sc_time t0 = us(1000);
    CHECK(ssd.read_page(slot, out.data(), t0) == t0 + us(50) + ps(2730667));
    CHECK(env.histogram("node0.ssd.write_latency").max() == Approx(22.730667).epsilon(1e-12));
    CHECK(env.histogram("node0.ssd.read_latency").max() == Approx(52.730667).epsilon(1e-12));
}

TEST_CASE("ssd: reads and writes alone: latency + transfer, from the issue time", "[os][ssd][timing]") {
    SsdEnv env;
    Ssd ssd(env.ctx, "node0.ssd", "node0");
    const auto slot = ssd.alloc_slot();
    REQUIRE(slot);
    Page in = pattern(3), out{};
    CHECK(ssd.write_page(*slot, in.data(), us(5)) == us(5 + 20 + 1));
    CHECK(ssd.read_page(*slot, out.data(), us(100)) == us(100 + 10 + 1));
    CHECK(ssd.read_page(*slot, out.data(), us(200)) == us(211));
}

TEST_CASE("ssd: the shared channel serialises transfers of concurrent commands", "[os][ssd][timing]") {
    SsdEnv env;
    Ssd ssd(env.ctx, "node0.ssd", "node0");
    const std::uint64_t slot = written_slot(ssd, 1);   // done at 21 us
    Page out{};
    // Eight reads issued together at 100 us: latencies overlap, transfers queue.
    for (int k = 0; k < 8; ++k) CHECK(ssd.read_page(slot, out.data(), us(100)) == us(111 + k));
    const Histogram& lat = env.histogram("node0.ssd.read_latency");
    CHECK(lat.count() == 8);
    CHECK(lat.min() == Approx(11.0));
    CHECK(lat.max() == Approx(18.0));
    CHECK(lat.sum() == Approx(11 + 12 + 13 + 14 + 15 + 16 + 17 + 18));
    // A write issued while the channel is busy until 118 us: latency runs from
    // issue, its transfer waits for the channel.
    const auto s2 = ssd.alloc_slot();
    REQUIRE(s2);
    const Page p = pattern(2);
    CHECK(ssd.write_page(*s2, p.data(), us(97)) == us(97 + 20 + 1) + us(1));   // 117 -> channel free at 118
}

TEST_CASE("ssd: queue depth bounds the commands in service", "[os][ssd][timing]") {
    SsdEnv env(Settings{{"ssd.queue-depth", "2"}});
    Ssd ssd(env.ctx, "node0.ssd", "node0");
    const std::uint64_t slot = written_slot(ssd, 1);   // slot 0 of the queue busy until 21 us
    Page out{};
    const sc_time t0 = us(100);
    // Two commands in service: both pay latency together, transfers in turn.
    CHECK(ssd.read_page(slot, out.data(), t0) == us(111));
    CHECK(ssd.read_page(slot, out.data(), t0) == us(112));
    // The third must wait for a queue slot (free at 111 us), then pays its
    // full latency: 111 + 10 + 1.
    CHECK(ssd.read_page(slot, out.data(), t0) == us(122));
    // The fourth takes the slot freed at 112 us.
    CHECK(ssd.read_page(slot, out.data(), t0) == us(123));
    // Latency is counted from issue: the wait for a queue slot is included.
    CHECK(env.histogram("node0.ssd.read_latency").sum() == Approx(11 + 12 + 22 + 23));
    CHECK(env.histogram("node0.ssd.read_latency").max() == Approx(23));

    // With a deep queue the same four would finish at 111..114 us.
    SsdEnv deep(Settings{{"ssd.queue-depth", "32"}});
    Ssd ssd2(deep.ctx, "node0.ssd", "node0");
    const std::uint64_t s = written_slot(ssd2, 1);
    for (int k = 0; k < 4; ++k) CHECK(ssd2.read_page(s, out.data(), t0) == us(111 + k));

    // Queue depth 1: strictly one command after another.
    SsdEnv one(Settings{{"ssd.queue-depth", "1"}});
    Ssd ssd1(one.ctx, "node0.ssd", "node0");
    const std::uint64_t s1 = written_slot(ssd1, 1);
    for (int k = 0; k < 3; ++k) CHECK(ssd1.read_page(s1, out.data(), t0) == us(111 + 11 * k));
}

TEST_CASE("ssd: pages round-trip byte for byte through swap slots", "[os][ssd]") {
    SsdEnv env;
    Ssd ssd(env.ctx, "node0.ssd", "node0");
    std::vector<std::uint64_t> slots;
    for (unsigned i = 0; i < 16; ++i) slots.push_back(written_slot(ssd, i));
    for (unsigned i = 0; i < 16; ++i) {
        Page out{};
        ssd.read_page(slots[i], out.data(), us(1000));
        CHECK(out == pattern(i));
    }
    // Overwriting replaces the contents; other slots keep theirs.
    const Page q = pattern(99);
    ssd.write_page(slots[3], q.data(), us(2000));
    Page out{};
    ssd.read_page(slots[3], out.data(), us(3000));
    CHECK(out == q);
    ssd.read_page(slots[4], out.data(), us(3000));
    CHECK(out == pattern(4));
    // The caller's buffer is copied at the call: changing it later changes nothing.
    Page mutable_page = pattern(50);
    ssd.write_page(slots[5], mutable_page.data(), us(4000));
    mutable_page.fill(0);
    ssd.read_page(slots[5], out.data(), us(5000));
    CHECK(out == pattern(50));

    CHECK(env.counter("node0.ssd.writes") == 18);
    CHECK(env.counter("node0.ssd.reads") == 19);
    CHECK(env.counter("node0.ssd.transactions") == 37);
    CHECK(env.stats.sum_counters("transactions") == 37);
    CHECK(env.histogram("node0.ssd.write_latency").count() == 18);
    CHECK(env.histogram("node0.ssd.read_latency").count() == 19);
    CHECK(env.histogram("node0.ssd.read_latency").info.unit() == "us");
}

TEST_CASE("ssd: slots: lowest fresh first, then most recently freed, exhaustion", "[os][ssd]") {
    SsdEnv env(Settings{{"ssd.swap-size", "16KiB"}});
    Ssd ssd(env.ctx, "node0.ssd", "node0");
    CHECK(ssd.free_slots() == 4);
    CHECK(ssd.alloc_slot() == 0u);
    CHECK(ssd.alloc_slot() == 1u);
    CHECK(ssd.free_slots() == 2);
    ssd.free_slot(0);
    CHECK(ssd.free_slots() == 3);
    CHECK(ssd.alloc_slot() == 0u);   // freed slots before fresh ones
    CHECK(ssd.alloc_slot() == 2u);
    CHECK(ssd.alloc_slot() == 3u);
    CHECK(ssd.free_slots() == 0);
    CHECK(ssd.alloc_slot() == std::nullopt);   // swap full
    ssd.free_slot(1);
    ssd.free_slot(3);
    ssd.free_slot(2);
    CHECK(ssd.free_slots() == 3);
    CHECK(ssd.alloc_slot() == 2u);   // LIFO: last freed first
    CHECK(ssd.alloc_slot() == 3u);
    CHECK(ssd.alloc_slot() == 1u);
    CHECK(ssd.alloc_slot() == std::nullopt);
}

TEST_CASE("ssd: misuse of slots is a logic error", "[os][ssd]") {
    SsdEnv env(Settings{{"ssd.swap-size", "16KiB"}});
    Ssd ssd(env.ctx, "node0.ssd", "node0");
    Page p = pattern(1), out{};
    const auto a = ssd.alloc_slot();
    REQUIRE(a == 0u);
    // Allocated but never written: nothing to read.
    CHECK_THROWS_AS(ssd.read_page(*a, out.data(), us(0)), std::logic_error);
    // Slots never allocated, or beyond the swap size.
    CHECK_THROWS_AS(ssd.read_page(1, out.data(), us(0)), std::logic_error);
    CHECK_THROWS_AS(ssd.write_page(1, p.data(), us(0)), std::logic_error);
    CHECK_THROWS_AS(ssd.write_page(100, p.data(), us(0)), std::logic_error);
    CHECK_THROWS_AS(ssd.free_slot(1), std::logic_error);
    CHECK_THROWS_AS(ssd.free_slot(100), std::logic_error);
    // No command was served by the failures.
    CHECK(env.counter("node0.ssd.transactions") == 0);

    ssd.write_page(*a, p.data(), us(0));
    ssd.free_slot(*a);
    CHECK_THROWS_AS(ssd.free_slot(*a), std::logic_error);   // double free
    CHECK_THROWS_AS(ssd.read_page(*a, out.data(), us(0)), std::logic_error);   // freed: data gone
    CHECK_THROWS_AS(ssd.write_page(*a, p.data(), us(0)), std::logic_error);   // freed: not writable
    CHECK(ssd.free_slots() == 4);
    // Reallocated: it is a fresh slot, not the old page.
    CHECK(ssd.alloc_slot() == 0u);
    CHECK_THROWS_AS(ssd.read_page(0, out.data(), us(0)), std::logic_error);

    SsdEnv odd(Settings{{"ssd.swap-size", "6KiB"}});
    CHECK_THROWS_AS(Ssd(odd.ctx, "node0.ssd", "node0"), ConfigError);
}

TEST_CASE("ssd: one trace span per command on track ssd", "[os][ssd]") {
    SsdEnv env;
    const std::string path = "/tmp/vrdmasim_ssd_test_" + std::to_string(getpid()) + ".json";
    env.tracer.open(path);
    Ssd ssd(env.ctx, "node3.ssd", "node3");
    const std::uint64_t slot = written_slot(ssd, 1);
    Page out{};
    ssd.read_page(slot, out.data(), us(100));
    ssd.read_page(slot, out.data(), us(100));
    CHECK(env.tracer.events_written() == 3);
    env.tracer.close();
    std::ifstream in(path);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string json = ss.str();
    std::remove(path.c_str());
    CHECK(json.find("\"node3\"") != std::string::npos);
    CHECK(json.find("\"ssd\"") != std::string::npos);
    CHECK(json.find("\"name\":\"write\"") != std::string::npos);
    CHECK(json.find("\"name\":\"read\"") != std::string::npos);

    SsdEnv quiet;
    Ssd ssd2(quiet.ctx, "node0.ssd", "node0");
    written_slot(ssd2, 1);
    CHECK(quiet.tracer.events_written() == 0);
}
