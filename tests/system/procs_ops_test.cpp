// RDMA reads and network atomics with node.processes = 2: every engine access
// carries the stream ID of the channel it serves (the responder's serving
// channel for a read reply's source reads, the reading channel for the
// reply's payload writes, the target channel of the request's domain for the
// atomic unit's read-modify-write), so each touches its own process's
// memory. The two processes of a node use the SAME virtual addresses holding
// DIFFERENT data: a read or an atomic served in the wrong address space
// returns the other process's bytes or values. Cold destination buffers and
// a cold atomic word fault at the same address in both processes, so fault
// outcomes must be matched by (stream, page), not by page alone.
//
// One simulation per TEST_CASE (SystemC allows one elaboration per process).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr unsigned kProcs = 2;
constexpr std::uint64_t kLen = 16 * 1024;   // four pages: the reply's payload writes fault on each when cold
constexpr std::uint64_t kWord = 1000;   // process p's warm word holds kWord * (p + 1)

struct Shared {
    // Node 0 (the responder and atomic target), per process.
    std::uint64_t src[kProcs] = {}, warm[kProcs] = {}, cold[kProcs] = {};
    unsigned mapped = 0;
    // Node 1 (the initiator), per process.
    std::uint64_t dst[kProcs] = {};
    std::uint64_t old_warm[kProcs] = {}, old_cold[kProcs] = {};
    bool done[kProcs] = {};
    sc_event ev;
};

std::vector<unsigned char> pattern_of(unsigned p) {
    std::vector<unsigned char> v(kLen);
    fill_pattern(v.data(), kLen, 7000 + p);
    return v;
}

// Node 0, process p: its read source (warm, filled with its own pattern),
// a warm atomic word holding kWord * (p + 1) and a cold one (never touched).
void target(RdmaProcess& app, unsigned p, Shared& sh) {
    sh.src[p] = app.alloc(kLen);
    const std::vector<unsigned char> data = pattern_of(p);
    REQUIRE(app.debug_write(sh.src[p], data.data(), kLen));
    sh.warm[p] = app.alloc(4096);
    const std::uint64_t v = kWord * (p + 1);
    REQUIRE(app.debug_write(sh.warm[p], reinterpret_cast<const unsigned char*>(&v), 8));
    sh.cold[p] = app.alloc(4096, false);
    ++sh.mapped;
    sh.ev.notify(app.now() - sc_time_stamp());
}

// Node 1, process p: reads its peer process's source into a cold buffer,
// then fetch-and-adds p + 1 to both words of its peer process.
void initiator(RdmaProcess& app, unsigned p, Shared& sh) {
    sh.dst[p] = app.alloc(kLen, false);
    const std::uint64_t rec = app.alloc_locked(3 * sizeof(CompletionRecord));
    app.wait_until([&] { return sh.mapped == kProcs; }, sh.ev);
    REQUIRE(app.post_read(0, sh.src[p], sh.dst[p], kLen, 1, rec));
    const CompletionRecord r = app.wait_record(rec);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == kLen);
    REQUIRE(app.post_atomic(AtomicOp::FetchAdd, 0, sh.warm[p], p + 1, 0, 2, rec + sizeof(CompletionRecord)));
    const CompletionRecord a = app.wait_record(rec + sizeof(CompletionRecord));
    CHECK(a.status == kStatusOk);
    sh.old_warm[p] = a.addr;
    REQUIRE(app.post_atomic(AtomicOp::FetchAdd, 0, sh.cold[p], p + 1, 0, 3, rec + 2 * sizeof(CompletionRecord)));
    const CompletionRecord c = app.wait_record(rec + 2 * sizeof(CompletionRecord));
    CHECK(c.status == kStatusOk);
    sh.old_cold[p] = c.addr;
    sh.done[p] = true;
}

std::uint64_t word_at(RdmaProcess& app, std::uint64_t va) {
    std::uint64_t v = 0;
    REQUIRE(app.debug_read(va, reinterpret_cast<unsigned char*>(&v), 8));
    return v;
}

void ops_case(const std::string& mode) {
    const bool terminate = mode == "terminate";
    SystemSim s({{"node.processes", "2"},
                 {"rdma.strategy", "fault-tolerant"},
                 {"workload.kind", "pingpong"},   // its programs are replaced below
                 {"smmu-driver.fault-mode", mode},
                 {"dma.fault-tolerant", terminate ? "true" : "false"},
                 {"sim.time-limit", "50ms"}});
    Shared sh;
    for (unsigned p = 0; p < kProcs; ++p) {
        s.sys->node(0).process(p).program = [&sh, p](RdmaProcess& app) { target(app, p, sh); };
        s.sys->node(1).process(p).program = [&sh, p](RdmaProcess& app) { initiator(app, p, sh); };
    }
    s.run();
    for (unsigned p = 0; p < kProcs; ++p) {
        INFO("process " << p);
        REQUIRE(sh.done[p]);
        // The same virtual addresses in both processes (what makes the test bite).
        CHECK(sh.src[p] == sh.src[0]);
        CHECK(sh.warm[p] == sh.warm[0]);
        CHECK(sh.cold[p] == sh.cold[0]);
        CHECK(sh.dst[p] == sh.dst[0]);
        // The read: process p's bytes of node 0, in process p's buffer of node 1.
        std::vector<unsigned char> got(kLen);
        REQUIRE(s.sys->node(1).process(p).debug_read(sh.dst[p], got.data(), kLen));
        CHECK(got == pattern_of(p));
        // The atomics: old values and results in process p's words only.
        CHECK(sh.old_warm[p] == kWord * (p + 1));
        CHECK(sh.old_cold[p] == 0);
        CHECK(word_at(s.sys->node(0).process(p), sh.warm[p]) == kWord * (p + 1) + p + 1);
        CHECK(word_at(s.sys->node(0).process(p), sh.cold[p]) == p + 1);
    }
    CHECK(s.counter("node0.dma.atomics_executed") == 2 * kProcs);
    CHECK(s.counter("node0.dma.read_requests_served") == kProcs);
    CHECK(s.counter("node1.dma.rx_errors") == 0);
    CHECK(s.counter("node0.dma.rx_errors") == 0);
    // Both processes' cold pages faulted, each in its own context bank.
    for (unsigned n = 0; n < 2; ++n)
        for (unsigned cb = 0; cb < kProcs; ++cb) {
            const std::string pre = "node" + std::to_string(n) + ".smmu.cb" + std::to_string(cb) + ".";
            INFO(pre);
            CHECK(s.counter(pre + "faults_read") + s.counter(pre + "faults_write") > 0);
        }
    if (terminate) {
        CHECK(s.counter("node1.dma.nacks_sent") > 0);   // the cold read destinations
        CHECK(s.counter("node0.dma.atomic_faults") >= kProcs);
        CHECK(s.counter("node0.dma.fault_outcomes_unmatched") == 0);
        CHECK(s.counter("node1.dma.fault_outcomes_unmatched") == 0);
    }
}

}   // namespace

TEST_CASE("procs ops: a read and an atomic use the memory of their own process (terminate)", "[procs][read][atomics]") {
    ops_case("terminate");
}

TEST_CASE("procs ops: a read and an atomic use the memory of their own process (stall)", "[procs][read][atomics]") {
    ops_case("stall");
}

TEST_CASE("procs ops: stream reads run per job, a cold job's faults neither lost nor crossed", "[procs][read]") {
    // Job 1 is cold (its sources fault at the responder, its destinations
    // at the reader), job 0 warm; both read their own process's bytes.
    SystemSim s({{"node.processes", "2"},
                 {"workload.kind", "stream"},
                 {"workload.operation", "read"},
                 {"workload.cold-jobs", "1"},
                 {"workload.message-size", "64KiB"},
                 {"workload.total-bytes", "512KiB"},
                 {"workload.window", "2"},
                 {"workload.buffers", "8"},
                 {"smmu-driver.fault-mode", "terminate"},
                 {"dma.fault-tolerant", "true"},
                 {"sim.time-limit", "200ms"}});
    s.run();
    REQUIRE(s.sys->workloads().size() == 2);
    for (const auto& w : s.sys->workloads()) {
        INFO("job " << w->job());
        REQUIRE(w->finished());
        const TransferLog& l = w->log();
        CHECK(l.errors.value() == 0);
        CHECK(l.mismatches.value() == 0);
        CHECK(l.bytes_delivered.value() == 512 * 1024);
        CHECK(l.bytes_verified.value() == 512 * 1024);
    }
    CHECK(s.counter("job1.workload.transfers") == 8);
    CHECK(s.counter("workload.transfers") == 8);
    CHECK(s.counter("node0.dma.read_requests_served") == 16);   // src-node serves both jobs
    CHECK(s.counter("node0.dma.parks") > 0);   // the cold job's reply source reads
    CHECK(s.counter("node1.dma.nacks_sent") > 0);   // and its reply payload writes
    CHECK(s.counter("node0.dma.fault_outcomes_unmatched") == 0);
    CHECK(s.counter("node1.dma.fault_outcomes_unmatched") == 0);
    // Only job 1's context bank (cb1) faulted, on both nodes.
    for (unsigned n = 0; n < 2; ++n) {
        const std::string p = "node" + std::to_string(n) + ".smmu.cb";
        CHECK(s.counter(p + "0.faults_read") + s.counter(p + "0.faults_write") == 0);
        CHECK(s.counter(p + "1.faults_read") + s.counter(p + "1.faults_write") > 0);
    }
}

TEST_CASE("procs ops: the lock workload builds with node.processes > 1 and two-sided refuses rdma.channels > 1",
          "[procs]") {
    // One lock per job (tests/system/lock_workload_test.cpp runs them).
    CHECK(config_refusal({{"node.processes", "2"}, {"workload.kind", "lock"}}).empty());
    const std::string ch = config_refusal({{"rdma.channels", "2"}, {"workload.kind", "sendrecv"}});
    CHECK(ch.find("rdma.channels") != std::string::npos);
    CHECK(ch.find("workload.kind = sendrecv") != std::string::npos);
}

// Two-sided messaging with two processes per node: each process has its
// own endpoint (its channel, slots, ring and statistics under its group),
// job p's sendrecv runs between the processes p of the two nodes, and every
// byte of every job arrives; their messages are never confused.
TEST_CASE("procs ops: sendrecv with two processes per node: each job its own endpoints", "[procs][sendrecv]") {
    SystemSim s({{"node.processes", "2"},
                 {"workload.kind", "sendrecv"},
                 {"workload.sendrecv-test", "bandwidth"},
                 {"workload.message-size", "16KiB"},
                 {"workload.total-bytes", "256KiB"}});
    s.run();
    REQUIRE(s.finished());
    REQUIRE(s.sys->workloads().size() == 2);
    for (const auto& w : s.sys->workloads()) {
        INFO("job " << w->job());
        const TransferLog& l = w->log();
        CHECK(l.errors.value() == 0);
        CHECK(l.mismatches.value() == 0);
        CHECK(l.bytes_delivered.value() == 256 * 1024);
        CHECK(l.bytes_verified.value() == 256 * 1024);
    }
    // Each process's own library: its messages counted under its group.
    CHECK(s.counter("node0.msg.rendezvous_sends") + s.counter("node0.msg.eager_sends") == 16);
    CHECK(s.counter("node0.proc1.msg.rendezvous_sends") + s.counter("node0.proc1.msg.eager_sends") == 16);
    CHECK(s.stats.sum_counters("rdma.early_completions") == 0);
}
