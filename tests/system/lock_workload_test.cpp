// The lock workload through the whole System: every lock kind of the user
// library keeps mutual exclusion (the shared counter equals the
// acquisitions, no two holders overlap, the lock is free at the end, the
// library's operation count matches the engines'), a semaphore admits up to
// its count, a lost update is caught, and settings that do not fit are
// refused. One simulation per TEST_CASE (SystemC).
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

Settings lock_run(const std::string& kind, const std::string& count = "1") {
    return {{"topology.kind", "qfdb"},         {"topology.nodes", "4"},
            {"workload.kind", "lock"},         {"lock.kind", kind},
            {"lock.acquisitions", "10"},       {"lock.semaphore-count", count},
            {"lock.critical-section", "2us"},  {"sim.time-limit", "100ms"}};
}

void check_exclusion(SystemSim& s, unsigned count) {
    s.run();
    REQUIRE(s.finished());
    CHECK(s.counter("workload.lock.acquisitions") == 40);
    CHECK(s.counter("workload.lock.violations") == 0);
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.log().transfers.value() == 40);
    CHECK(s.scalar("workload.lock.max_holders") >= 1);
    CHECK(s.scalar("workload.lock.max_holders") <= count);
    if (count == 1) CHECK(s.scalar("workload.lock.counter") == 40);
    CHECK(s.scalar("workload.lock.ops_per_acquire") >= 1);
    CHECK(s.scalar("workload.lock.fairness") > 0.25);   // 1/n is one process doing all the waiting
    CHECK(s.scalar("workload.lock.fairness") <= 1.0);
}

}  // namespace

#define LOCK_CASE(kind)                                                                      \
    TEST_CASE("lock " kind ": mutual exclusion holds and is checked", "[lock]") {            \
        SystemSim s(lock_run(kind));                                                         \
        check_exclusion(s, 1);                                                               \
    }
LOCK_CASE("spin")
LOCK_CASE("mcs")
LOCK_CASE("semaphore")
LOCK_CASE("wait-queue")
LOCK_CASE("bakery")
LOCK_CASE("plain-semaphore")

TEST_CASE("lock: atomic kinds use atomics only for the lock, plain kinds none", "[lock]") {
    SystemSim s(lock_run("bakery"));
    s.run();
    REQUIRE(s.finished());
    std::uint64_t atomics = 0;
    for (unsigned n = 0; n < 4; ++n) atomics += s.counter("node" + std::to_string(n) + ".dma.atomics_posted");
    CHECK(atomics == 0);
    CHECK(s.counter("workload.lock.violations") == 0);
}

TEST_CASE("lock semaphore of count 2: up to two hold it at once, never three", "[lock]") {
    SystemSim s(lock_run("semaphore", "2"));
    check_exclusion(s, 2);
    CHECK(s.scalar("workload.lock.max_holders") == 2);   // with 4 contenders and a long critical section
}

TEST_CASE("lock plain-semaphore of count 2: up to two hold it at once", "[lock]") {
    SystemSim s(lock_run("plain-semaphore", "2"));
    check_exclusion(s, 2);
}

TEST_CASE("lock: an update of the shared counter lost behind the lock's back is a mismatch", "[lock]") {
    SystemSim s(lock_run("mcs"));
    // Halfway through, something outside the lock resets the counter.
    At saboteur("saboteur", sc_time(60, SC_US), [&] {
        RdmaProcess& home = s.sys->node(0).app;
        const std::uint64_t zero = 0;
        // The home process maps the counter (then the lock's words) last.
        REQUIRE(!home.allocations().empty());
        REQUIRE(home.debug_write(home.allocations().back().first, reinterpret_cast<const unsigned char*>(&zero), 8));
    });
    s.run();
    REQUIRE(s.finished());
    CHECK(s.counter("workload.lock.violations") >= 1);
    CHECK(s.log().mismatches.value() >= 1);
    CHECK(s.scalar("workload.lock.counter") < 40);
}

TEST_CASE("lock: a semaphore count for a lock is refused before simulation", "[lock]") {
    CHECK_THROWS_AS(SystemSim(lock_run("spin", "2")), ConfigError);
}

TEST_CASE("lock: a home node the system does not have is refused before simulation", "[lock]") {
    Settings home = lock_run("mcs");
    home.push_back({"lock.home-node", "7"});   // 4 nodes
    CHECK_THROWS_AS(SystemSim(home), ConfigError);
}

TEST_CASE("lock mcs on cold memory, terminate mode: the home's first atomics fault, exclusion holds", "[lock]") {
    Settings set = lock_run("mcs");
    set.push_back({"workload.populate", "false"});
    set.push_back({"smmu-driver.fault-mode", "terminate"});
    set.push_back({"dma.fault-tolerant", "true"});
    SystemSim s(set);
    check_exclusion(s, 1);
    CHECK(s.counter("node0.dma.atomic_faults") > 0);
}

TEST_CASE("lock spin on cold memory, stall mode: the home's first atomics wait in its SMMU, exclusion holds",
          "[lock]") {
    Settings set = lock_run("spin");
    set.push_back({"workload.populate", "false"});
    set.push_back({"smmu-driver.fault-mode", "stall"});
    set.push_back({"dma.fault-tolerant", "false"});
    SystemSim s(set);
    check_exclusion(s, 1);
    CHECK(s.counter("node0.smmu.cb0.faults_read") + s.counter("node0.smmu.cb0.faults_write") > 0);
}

TEST_CASE("lock mcs: 2 to 4 engine operations per acquisition, as workloads/README.md says", "[lock]") {
    SystemSim s(lock_run("mcs"));
    s.run();
    REQUIRE(s.finished());
    CHECK(s.scalar("workload.lock.ops_per_acquire") >= 2.0);
    CHECK(s.scalar("workload.lock.ops_per_acquire") <= 4.0);
    CHECK(s.counter("workload.lock.violations") == 0);
}
