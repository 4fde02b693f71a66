// The lock workload through the whole System: every lock kind of the user
// library keeps mutual exclusion (the shared counter equals the
// acquisitions, no two holders overlap, the lock is free at the end, the
// library's operation count matches the engines'), a semaphore admits up to
// its count, a lost update is caught, and settings that do not fit are
// refused; with node.processes > 1 every job contends for its own lock and
// keeps its own checks and statistics, and a mix-up between the jobs (an
// update or a completion landing in the other job) is caught and charged to
// the job it hit. One simulation per TEST_CASE (SystemC).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include "src/sim/invariants.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/lock_workload.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

Settings lock_run(const std::string& kind, const std::string& count = "1") {
    return {{"topology.kind", "qfdb"},        {"topology.nodes", "4"},
            {"workload.kind", "lock"},        {"lock.kind", kind},
            {"lock.acquisitions", "10"},      {"lock.semaphore-count", count},
            {"lock.critical-section", "2us"}, {"sim.time-limit", "100ms"}};
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

}   // namespace

#define LOCK_CASE(kind)                                                           \
    TEST_CASE("lock " kind ": mutual exclusion holds and is checked", "[lock]") { \
        SystemSim s(lock_run(kind));                                              \
        check_exclusion(s, 1);                                                    \
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

TEST_CASE("lock mcs: 2 to 4 engine operations per acquisition, as docs/workloads.md says", "[lock]") {
    SystemSim s(lock_run("mcs"));
    s.run();
    REQUIRE(s.finished());
    CHECK(s.scalar("workload.lock.ops_per_acquire") >= 2.0);
    CHECK(s.scalar("workload.lock.ops_per_acquire") <= 4.0);
    CHECK(s.counter("workload.lock.violations") == 0);
}

// ---- Several processes per node: one lock per job (docs/workloads.md "Several processes per node").

namespace {

Settings lock_procs(const std::string& kind, unsigned procs, const std::string& count = "1") {
    Settings s = lock_run(kind, count);
    s.push_back({"node.processes", std::to_string(procs)});
    return s;
}

std::string job_stat(unsigned job, const std::string& leaf) { return Workload::stats_prefix(job) + "lock." + leaf; }

// The counter of job `job`: the last region its home process (node 0's
// process `job`) mapped.
std::uint64_t counter_address(SystemSim& s, unsigned job) {
    RdmaProcess& home = s.sys->node(0).process(job);
    REQUIRE(!home.allocations().empty());
    return home.allocations().back().first;
}
std::uint64_t read_word(RdmaProcess& app, std::uint64_t addr) {
    std::uint64_t v = 0;
    REQUIRE(app.debug_read(addr, reinterpret_cast<unsigned char*>(&v), 8));
    return v;
}
void write_word(RdmaProcess& app, std::uint64_t addr, std::uint64_t v) {
    REQUIRE(app.debug_write(addr, reinterpret_cast<const unsigned char*>(&v), 8));
}

// Completions the engines counted on the channels of job `job`'s processes.
std::uint64_t job_completions(SystemSim& s, unsigned job) {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < s.sys->size(); ++i) {
        Node& node = s.sys->node(i);
        const RdmaProcess& a = node.process(job);
        for (unsigned k = 0; k < a.channel_count(); ++k) n += node.dma.tx_signal(a.channel() + k).raised();
    }
    return n;
}

// Every job on its own: 4 processes x 10 acquisitions, its own counter (in
// its own address space, at the same virtual address as every other
// job's), at most `count` holders, no violation, every operation it posted
// completed on its own channels; and over all jobs, the engines posted what
// the libraries did.
void check_jobs(SystemSim& s, unsigned procs, unsigned count) {
    s.run();
    REQUIRE(s.sys->workloads().size() == procs);
    std::uint64_t library = 0;
    for (unsigned j = 0; j < procs; ++j) {
        INFO("job " << j);
        Workload& w = *s.sys->workloads()[j];
        REQUIRE(w.finished());
        CHECK(w.job() == j);
        CHECK(s.counter(job_stat(j, "acquisitions")) == 40);
        CHECK(s.counter(job_stat(j, "violations")) == 0);
        CHECK(w.log().transfers.value() == 40);
        CHECK(w.log().mismatches.value() == 0);
        CHECK(s.scalar(job_stat(j, "max_holders")) >= 1);
        CHECK(s.scalar(job_stat(j, "max_holders")) <= count);
        if (count == 1) {
            CHECK(s.scalar(job_stat(j, "counter")) == 40);
            CHECK(read_word(s.sys->node(0).process(j), counter_address(s, j)) == 40);
            CHECK(counter_address(s, j) == counter_address(s, 0));   // same VA, another address space
        }
        CHECK(s.scalar(job_stat(j, "fairness")) > 0.25);
        CHECK(s.scalar(job_stat(j, "fairness")) <= 1.0);
        const auto& lock = dynamic_cast<const LockWorkload&>(w);
        const std::uint64_t ops = s.counter(job_stat(j, "lock_operations")) + s.counter(job_stat(j, "cs_operations"));
        CHECK(lock.library_operations() == ops);
        CHECK(job_completions(s, j) == ops);
        library += ops;
    }
    std::uint64_t engines = 0;
    for (unsigned n = 0; n < 4; ++n)
        engines += s.counter("node" + std::to_string(n) + ".dma.atomics_posted") +
                   s.counter("node" + std::to_string(n) + ".dma.transfers_posted");
    CHECK(engines == library);
    RunFigures f = run_figures(*s.sys);
    const auto v = check_invariants(*s.sys, s.stats, f);
    INFO(describe(v));
    CHECK(v.empty());
}

}   // namespace

#define LOCK_PROCS_CASE(kind, procs)                                                                        \
    TEST_CASE("lock " kind " with " #procs " processes per node: each job keeps exclusion on its own lock", \
              "[lock][procs]") {                                                                            \
        SystemSim s(lock_procs(kind, procs));                                                               \
        check_jobs(s, procs, 1);                                                                            \
    }
LOCK_PROCS_CASE("spin", 2)
LOCK_PROCS_CASE("mcs", 2)
LOCK_PROCS_CASE("semaphore", 2)
LOCK_PROCS_CASE("wait-queue", 2)
LOCK_PROCS_CASE("bakery", 2)
LOCK_PROCS_CASE("plain-semaphore", 2)
LOCK_PROCS_CASE("spin", 4)
LOCK_PROCS_CASE("mcs", 4)
LOCK_PROCS_CASE("semaphore", 4)
LOCK_PROCS_CASE("wait-queue", 4)
LOCK_PROCS_CASE("bakery", 4)
LOCK_PROCS_CASE("plain-semaphore", 4)

TEST_CASE("lock semaphore of count 2 with 2 processes per node: two holders per job at most", "[lock][procs]") {
    SystemSim s(lock_procs("semaphore", 2, "2"));
    check_jobs(s, 2, 2);
    CHECK(s.scalar(job_stat(0, "max_holders")) == 2);
    CHECK(s.scalar(job_stat(1, "max_holders")) == 2);
}

TEST_CASE("lock mcs with 2 processes per node: the home's atomic unit serves both jobs' locks", "[lock][procs]") {
    SystemSim s(lock_procs("mcs", 2));
    check_jobs(s, 2, 1);
    // Every atomic of both jobs (the swaps on the tails, the releasing
    // compare-and-swaps) is executed by node 0's engine, where both locks live.
    std::uint64_t posted = 0;
    for (unsigned n = 0; n < 4; ++n) posted += s.counter("node" + std::to_string(n) + ".dma.atomics_posted");
    CHECK(posted >= 2 * 40);
    CHECK(s.counter("node0.dma.atomics_executed") == posted);
    for (unsigned n = 1; n < 4; ++n) CHECK(s.counter("node" + std::to_string(n) + ".dma.atomics_executed") == 0);
}

TEST_CASE("lock: an increment landing in the other job's counter (same VA in another process) is caught in both jobs",
          "[lock][procs]") {
    SystemSim s(lock_procs("mcs", 2));
    // Halfway through, one of job 1's increments lands in job 0's counter:
    // the same virtual address in node 0's process 0 instead of process 1.
    // Each counter is changed while its job's MCS queue is empty (tail 0,
    // the word after the counter): no process is between its read and its
    // write of it, so no increment in flight overwrites the change.
    At mixup("mixup", sc_time(60, SC_US), [&] {
        const std::uint64_t at = counter_address(s, 1);
        REQUIRE(at == counter_address(s, 0));
        bool taken = false, given = false;
        while (!(taken && given)) {
            RdmaProcess& home0 = s.sys->node(0).process(0);
            RdmaProcess& home1 = s.sys->node(0).process(1);
            if (!taken && read_word(home1, at + 8) == 0) {
                write_word(home1, at, read_word(home1, at) - 1);
                taken = true;
            }
            if (!given && read_word(home0, at + 8) == 0) {
                write_word(home0, at, read_word(home0, at) + 1);
                given = true;
            }
            sc_core::wait(sc_time(50, SC_NS));
        }
        REQUIRE(!s.sys->workloads()[0]->finished());
        REQUIRE(!s.sys->workloads()[1]->finished());
    });
    s.run();
    for (unsigned j = 0; j < 2; ++j) {
        INFO("job " << j);
        REQUIRE(s.sys->workloads()[j]->finished());
        CHECK(s.counter(job_stat(j, "violations")) >= 1);
        CHECK(s.sys->workloads()[j]->log().mismatches.value() >= 1);
    }
    CHECK(s.scalar(job_stat(0, "counter")) == 41);
    CHECK(s.scalar(job_stat(1, "counter")) == 39);
}

TEST_CASE("lock: a completion the engine counts on another job's channel is caught and charged to that job",
          "[lock][procs]") {
    SystemSim s(lock_procs("mcs", 2));
    // Halfway through, node 1's engine counts a completion on the channel
    // of its process 1 (job 1) that job 1 never posted (job 0's, say).
    At mixup("mixup", sc_time(60, SC_US), [&] {
        Node& n1 = s.sys->node(1);
        n1.dma.tx_signal(n1.process(1).channel()).raise_at(sc_time_stamp());
    });
    s.run();
    REQUIRE(s.sys->workloads()[0]->finished());
    REQUIRE(s.sys->workloads()[1]->finished());
    CHECK(s.counter(job_stat(0, "violations")) == 0);
    CHECK(s.counter(job_stat(1, "violations")) == 1);
    CHECK(s.sys->workloads()[0]->log().mismatches.value() == 0);
    CHECK(s.sys->workloads()[1]->log().mismatches.value() == 1);
    // Every job's counter is right: only the operation count saw it.
    CHECK(s.scalar(job_stat(0, "counter")) == 40);
    CHECK(s.scalar(job_stat(1, "counter")) == 40);
}

TEST_CASE("lock: a lost update in job 1 is charged to job 1 alone", "[lock][procs]") {
    SystemSim s(lock_procs("spin", 2));
    At saboteur("saboteur", sc_time(60, SC_US),
                [&] { write_word(s.sys->node(0).process(1), counter_address(s, 1), 0); });
    s.run();
    REQUIRE(s.sys->workloads()[1]->finished());
    CHECK(s.counter(job_stat(0, "violations")) == 0);
    CHECK(s.scalar(job_stat(0, "counter")) == 40);
    CHECK(s.counter(job_stat(1, "violations")) >= 1);
    CHECK(s.scalar(job_stat(1, "counter")) < 40);
}
