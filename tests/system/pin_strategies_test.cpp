// The properties pin-static and pin-deferred promise on their own (their
// fault-situation matrix is in strategy_test.cpp): pin-static registers each
// buffer once, not each message; pin-deferred's posts wait less than pin's
// on the same stream; both respect RLIMIT_MEMLOCK and fail loudly beyond it.
//
// One simulation per TEST_CASE (SystemC elaborates once per process); the
// comparison runs its two simulations in child processes.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "child_process.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr std::uint64_t kOneKiB = 1024;

using Sim = SystemSim;

// 1 MiB in 8 messages of 128 KiB, window 2, every message in a buffer of its
// own, cold (never touched): registration has to fault every page in.
Settings cold_stream(const std::string& strategy) {
    return {{"rdma.strategy", strategy},         {"rdma.pipeline-chunk", "32KiB"},  {"workload.total-bytes", "1MiB"},
            {"workload.message-size", "128KiB"}, {"workload.window", "2"},          {"workload.buffers", "8"},
            {"workload.populate", "false"},      {"workload.fill-source", "false"}, {"vm.thp", "never"},
            {"vm.memlock-limit", "64MiB"}};
}

// Scalar `figure` of the cold stream under `strategy`, run in a child
// process; NaN if the run did not finish cleanly.
double cold_stream_figure(const std::string& strategy, const std::string& figure) {
    return in_child([&] {
        Sim s(cold_stream(strategy));
        s.run();
        if (!s.finished() || s.log().errors.value() != 0) return std::nan("");
        return s.scalar(figure);
    });
}

void check_memlock_refusal(const std::string& strategy) {
    Sim s({{"rdma.strategy", strategy},
           {"rdma.pipeline-chunk", "32KiB"},
           {"workload.total-bytes", "512KiB"},
           {"workload.message-size", "128KiB"},
           {"workload.window", "2"},
           {"vm.thp", "never"},
           {"vm.memlock-limit", "64KiB"}});
    s.run();
    REQUIRE(s.finished());   // the simulation ends
    CHECK(s.counter("node0.rdma.registration_failures") > 0);
    CHECK(s.counter("node0.vm.memlock_refusals") > 0);
    CHECK(s.log().transfers.value() == 4);
    CHECK(s.log().errors.value() == 4);   // every message fails: none is left half registered
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.log().bytes_delivered.value() == 0);
    CHECK(s.counter("node0.dma.transfers_posted") == 0);
    CHECK(s.pinned_bytes(0) == 0);   // what the sender pinned is unpinned at its end
}

}   // namespace

TEST_CASE("pin-static: one registration per buffer, not per message", "[strategy][pin-static]") {
    Sim s(cold_stream("pin-static"));
    s.run();
    REQUIRE(s.finished());
    CHECK(s.log().transfers.value() == 8);
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().bytes_verified.value() == 1024 * kOneKiB);
    // The stream maps its sources as one region (8 message slots) and its
    // destinations as one: one registration each, for 8 messages.
    CHECK(s.counter("node0.rdma.registrations") == 1);
    CHECK(s.counter("node1.rdma.registrations") == 1);
    CHECK(s.counter("node0.rdma.deregistrations") == 1);   // at the sender's end
    CHECK(s.scalar("node0.rdma.pinned_bytes_peak") >= static_cast<double>(1024 * kOneKiB));
    CHECK(s.smmu_faults(0) + s.smmu_faults(1) == 0);   // pinned whole before any post
    CHECK(s.pinned_bytes(0) == 0);
    // The receiver's area stays registered for the whole run, as under
    // every strategy (the stream's receiver never deregisters it).
    CHECK(s.pinned_bytes(1) == 1024 * kOneKiB);
    CHECK(s.counter("node0.rdma.registration_failures") == 0);
}

TEST_CASE("pin-deferred: the registration thread pins off the critical path, every byte verified",
          "[strategy][pin-deferred]") {
    Sim s(cold_stream("pin-deferred"));
    s.run();
    REQUIRE(s.finished());
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().bytes_verified.value() == 1024 * kOneKiB);
    // 1 MiB of sources in 32 KiB chunks: each pinned exactly once, by the
    // thread or by a post that reached it first.
    const std::uint64_t chunks = 1024 / 32;
    CHECK(s.counter("node0.rdma.registrations") == chunks);
    CHECK(s.counter("node0.rdma.background_pins") + s.counter("node0.rdma.foreground_pins") == chunks);
    CHECK(s.counter("node0.rdma.background_pins") > 0);
    CHECK(s.counter("node0.rdma.deregistrations") == chunks);
    CHECK(s.scalar("node0.rdma.background_pin_time") > 0);
    CHECK(s.smmu_faults(0) + s.smmu_faults(1) == 0);   // no post ran ahead of its pins
    CHECK(s.pinned_bytes(0) == 0);
    CHECK(s.pinned_bytes(1) == 1024 * kOneKiB);   // the receive area, registered for the run
}

TEST_CASE("pin-deferred: posts wait less for registration than pin's on the same stream", "[strategy][pin-deferred]") {
    // pin: each post waits for its whole pin (acquire's time); pin-deferred:
    // only for the chunks the thread had not pinned yet.
    // pin's registration time: acquire and release (the unpin is on the
    // critical path too).
    const double pin_wait = cold_stream_figure("pin", "node0.rdma.registration_time");
    const double deferred_wait = cold_stream_figure("pin-deferred", "node0.rdma.deferred_wait");
    INFO("pin registration " << pin_wait << " us, pin-deferred wait " << deferred_wait << " us");
    REQUIRE(pin_wait > 0);
    REQUIRE(deferred_wait >= 0);
    CHECK(deferred_wait < 0.5 * pin_wait);
}

TEST_CASE("pin-static: a buffer beyond RLIMIT_MEMLOCK fails every message in it", "[strategy][pin-static]") {
    check_memlock_refusal("pin-static");
}

TEST_CASE("pin-deferred: chunks beyond RLIMIT_MEMLOCK fail the messages that need them", "[strategy][pin-deferred]") {
    check_memlock_refusal("pin-deferred");
}
