// Prefetch advice (rdma.prefetch = advise; library/rdma/README.md
// "Prefetch advice") in the whole system: on cold buffers the advised pages
// are made present beside the transfers, so the engines fault less and the
// stream is faster; every byte is still verified; the worker's work is on
// the node's cores; the pages made present were advised. One simulation per
// TEST_CASE.
#include <catch2/catch.hpp>

#include <string>

#include "system_sim.hpp"

using namespace vrdmasim;

namespace {

// A cold stream of 1 MiB in 64 KiB messages, a buffer per message, 4 KiB pages.
Settings cold(const std::string& prefetch) {
    return {{"workload.total-bytes", "1MiB"},        {"workload.message-size", "64KiB"}, {"workload.populate", "false"},
            {"workload.fill-source", "false"},       {"workload.buffers", "16"},         {"vm.thp", "never"},
            {"smmu-driver.fault-mode", "terminate"}, {"dma.fault-tolerant", "true"},     {"rdma.prefetch", prefetch}};
}

struct Figures {
    std::uint64_t faults = 0, populated = 0, advised = 0, verified = 0;
    double end_us = 0, worker_syscall_us = 0;
};

Figures run(const std::string& prefetch) {
    SystemSim s(cold(prefetch));
    s.run();
    REQUIRE(s.finished());
    Figures f;
    f.faults = s.stats.sum_counters("faults_translation");
    f.verified = s.log().bytes_verified.value();
    f.end_us = sc_core::sc_time_stamp().to_seconds() * 1e6;
    if (prefetch == "advise") {
        for (const char* n : {"node0", "node1"}) {
            f.populated += s.stats.find_counter(std::string(n) + ".rdma.prefetch.populated_pages")->value();
            f.advised += s.stats.find_counter(std::string(n) + ".rdma.prefetch.advised_pages")->value();
        }
        f.worker_syscall_us = s.stats.find_scalar("node1.cpu.syscall.busy_time")->value();
    }
    return f;
}

}   // namespace

TEST_CASE("prefetch system: without advice every cold page faults in the SMMU", "[prefetch]") {
    const Figures f = run("none");
    CHECK(f.verified == 1024 * 1024);
    // Every page of both sides faults, 16 a fault (fault-lib.policy =
    // touch-ahead): 2 x 256 / 16.
    CHECK(f.faults == 32);
    // The stream ends at 1,789 us (the case below compares with it).
    CHECK(f.end_us == Approx(1788.90).epsilon(0.001));
}

TEST_CASE("prefetch system: advice makes the cold pages present beside the transfers", "[prefetch]") {
    const Figures f = run("advise");
    CHECK(f.verified == 1024 * 1024);
    // Both sides advised all 256 pages of their 1 MiB; the workers made
    // present what the engines had not faulted in first.
    CHECK(f.advised == 2 * 256);
    CHECK(f.populated > 2 * 256 * 8 / 10);
    CHECK(f.populated <= f.advised);
    // The receiver's worker populated on node 1's cores (as system calls).
    CHECK(f.worker_syscall_us > 0);
    // The engines fault only where they caught up with a worker (5 here, 32
    // without advice), and the stream ends in less than 60 % of the 1,789 us
    // it takes without advice.
    CHECK(f.faults <= 6);
    CHECK(f.end_us < 0.6 * 1788.90);
}
