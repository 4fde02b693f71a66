// The fileserve workload (workloads/README.md "File serving") in the whole
// system: every method with a warm and a cold page cache, under memory
// pressure (the server's cache reclaimed while serving), with THP collapse of
// the server's and clients' anonymous buffers, mmap-fault in stall and
// terminate mode; every byte verified against FileSystem::byte, the run's
// invariants (each request answered once, bytes served = verified, the SSD
// read at least what the cache missed, nothing left pinned); and each
// refused combination. One simulation per TEST_CASE.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "fault_situations.hpp"
#include "invariants.hpp"
#include "system_sim.hpp"
#include "workloads/fileserve.hpp"

using namespace vrdmasim;
using namespace vrdmasim::situations;

namespace {

Settings operator+(Settings a, const Settings& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Three nodes of a QFDB: the server on node 0 (the SSD's FPGA), two clients.
// 4 files of 64 KiB, 4 requests per client, 2 outstanding each.
const SystemSim::Defaults kBase{{{"topology.nodes", "3"},
                                 {"workload.kind", "fileserve"},
                                 {"fs.files", "4"},
                                 {"fs.file-size", "64KiB"},
                                 {"fileserve.clients", "2"},
                                 {"fileserve.requests", "4"},
                                 {"fileserve.outstanding", "2"},
                                 {"vm.memlock-limit", "64MiB"},
                                 {"sim.time-limit", "1s"}}};

constexpr std::uint64_t kRequests = 8, kFile = 64 * 1024;

struct Run {
    std::uint64_t copies = 0, pins = 0, ssd_bytes = 0, ssd_reads = 0, major = 0, packets = 0, evictions = 0,
                  smmu_faults = 0;
    double cpu_ns_per_byte = 0, registration_us = 0;
};

Run checked(SystemSim& s, std::uint64_t requests = kRequests, std::uint64_t bytes = kRequests * kFile) {
    s.run();
    if (std::getenv("VRDMASIM_TEST_STATS")) s.stats.write_text(std::cerr);
    REQUIRE(s.finished());
    s.check_all_verified(requests, bytes);
    Run r;
    r.copies = s.counter("workload.fileserve.copy_bytes");
    r.pins = s.counter("workload.fileserve.pins");
    r.ssd_bytes = s.counter("workload.fileserve.ssd_bytes");
    r.ssd_reads = s.counter("workload.fileserve.ssd_reads");
    r.major = s.counter("workload.fileserve.major_faults");
    r.packets = s.counter("workload.fileserve.packets");
    r.evictions = s.counter("node0.pagecache.evictions");
    r.smmu_faults = s.smmu_faults(0);
    r.cpu_ns_per_byte = s.scalar("workload.fileserve.cpu_ns_per_byte");
    r.registration_us = s.scalar("workload.fileserve.registration_time");
    CHECK(s.counter("workload.fileserve.answered") == requests);
    CHECK(s.counter("workload.fileserve.served_bytes") == bytes);
    CHECK(r.cpu_ns_per_byte > 0);
    // Nothing of the server's left pinned (page-cache pins and its buffers').
    for (unsigned f = 0; f < 4; ++f)
        for (std::uint64_t o = 0; o < kFile; o += 4096) CHECK(s.sys->node(0).vm.file_pins(f, o) == 0);
    RunFigures f = run_figures(*s.sys);   // as the runner computes them
    f.link_util_max = 0.5;
    const auto v = check_invariants(*s.sys, s.stats, f);
    INFO(describe(v));
    CHECK(v.empty());
    return r;
}

Settings method(const char* m, const char* cache) { return {{"fileserve.method", m}, {"fileserve.cache", cache}}; }

}  // namespace

// ---- every method, warm and cold

TEST_CASE("fileserve read-copy, warm: one copy per byte, nothing from the SSD", "[fileserve]") {
    SystemSim s(kBase, method("read-copy", "warm"));
    const Run r = checked(s);
    CHECK(r.copies == kRequests * kFile);
    CHECK(r.ssd_bytes == 0);
    CHECK(r.major == 0);
}

TEST_CASE("fileserve read-copy, cold: the SSD serves the first touches", "[fileserve]") {
    SystemSim s(kBase, method("read-copy", "cold"));
    const Run r = checked(s);
    CHECK(r.copies == kRequests * kFile);
    CHECK(r.ssd_bytes > 0);
    CHECK(r.ssd_bytes <= 4 * kFile);   // each page read once (nothing reclaimed)
}

TEST_CASE("fileserve pipeline, warm: chunks read and registered while the previous is on the wire", "[fileserve]") {
    SystemSim s(kBase, method("pipeline", "warm") + Settings{{"fileserve.chunk", "16KiB"}, {"rdma.strategy", "pin"}});
    const Run r = checked(s);
    CHECK(r.copies == kRequests * kFile);
    CHECK(r.pins == kRequests * kFile / 4096);   // every chunk pinned when registered
    CHECK(r.registration_us > 0);
    CHECK(r.ssd_bytes == 0);
}

TEST_CASE("fileserve pipeline, cold", "[fileserve]") {
    SystemSim s(kBase, method("pipeline", "cold") + Settings{{"fileserve.chunk", "16KiB"}});
    const Run r = checked(s);
    CHECK(r.copies == kRequests * kFile);
    CHECK(r.ssd_bytes > 0);
}

TEST_CASE("fileserve sendfile, warm: no copy, the page-cache pages pinned per request", "[fileserve]") {
    SystemSim s(kBase, method("sendfile", "warm"));
    const Run r = checked(s);
    CHECK(r.copies == 0);
    CHECK(r.pins == kRequests * kFile / 4096);
    CHECK(r.ssd_bytes == 0);
}

TEST_CASE("fileserve sendfile, cold, pin-down cache: each page pinned once for the run", "[fileserve]") {
    SystemSim s(kBase, method("sendfile", "cold") + Settings{{"fileserve.sendfile-cache", "true"}});
    const Run r = checked(s);
    CHECK(r.copies == 0);
    CHECK(r.pins <= 4 * kFile / 4096);
    CHECK(r.pins > 0);
    CHECK(r.ssd_bytes > 0);
}

TEST_CASE("fileserve mmap-fault, warm: minor faults through the SMMU, no SSD", "[fileserve]") {
    SystemSim s(kBase, method("mmap-fault", "warm"));
    const Run r = checked(s);
    CHECK(r.copies == 0);
    CHECK(r.pins == 0);
    CHECK(r.smmu_faults > 0);
    CHECK(r.major == 0);
    CHECK(r.ssd_bytes == 0);
}

TEST_CASE("fileserve mmap-fault, cold, stall mode: major faults read the SSD", "[fileserve]") {
    SystemSim s(kBase, method("mmap-fault", "cold") + Settings{{"smmu-driver.fault-mode", "stall"}});
    const Run r = checked(s);
    CHECK(r.copies == 0);
    CHECK(r.smmu_faults > 0);
    CHECK(r.major > 0);
    CHECK(r.ssd_bytes > 0);
}

TEST_CASE("fileserve mmap-fault, cold, terminate mode with the fault-tolerant engine", "[fileserve]") {
    SystemSim s(kBase, method("mmap-fault", "cold") +
                           Settings{{"smmu-driver.fault-mode", "terminate"}, {"dma.fault-tolerant", "true"}});
    const Run r = checked(s);
    CHECK(r.smmu_faults > 0);
    CHECK(r.major > 0);
    CHECK(s.stats.sum_counters("dma.nacks_sent") + s.stats.sum_counters("dma.parks") > 0);
}

TEST_CASE("fileserve kernel-copy, warm: two copies, a packet per MTU", "[fileserve]") {
    SystemSim s(kBase, method("kernel-copy", "warm"));
    const Run r = checked(s);
    CHECK(r.copies == 2 * kRequests * kFile);
    CHECK(r.packets == kRequests * ((kFile + 1499) / 1500));
    CHECK(r.ssd_bytes == 0);
}

TEST_CASE("fileserve kernel-copy, cold", "[fileserve]") {
    SystemSim s(kBase, method("kernel-copy", "cold"));
    const Run r = checked(s);
    CHECK(r.copies == 2 * kRequests * kFile);
    CHECK(r.ssd_bytes > 0);
}

// ---- ranges and popularity

TEST_CASE("fileserve ranges of 16 KiB drawn Zipf: every byte of every range verified", "[fileserve]") {
    SystemSim s(kBase, method("sendfile", "cold") + Settings{{"fileserve.request-size", "16KiB"},
                                                             {"fileserve.popularity", "zipf"},
                                                             {"fileserve.requests", "8"}});
    checked(s, 16, 16 * 16 * 1024);
}

// ---- memory pressure: the server's page cache reclaimed while serving

namespace {
Run under_pressure(const char* m, Settings extra = {}) {
    SystemSim s(kBase, method(m, "warm") + Settings{{"fileserve.requests", "12"}} + extra);
    Effect e;
    auto agent = start(s, Situation::Swap, {0}, e);
    const Run r = checked(s, 24, 24 * kFile);
    CHECK(e.rounds > 0);
    CHECK(r.evictions > 0);
    CHECK(r.ssd_bytes > 0);   // evicted pages read again
    return r;
}
}  // namespace

TEST_CASE("fileserve read-copy under memory pressure", "[fileserve][pressure]") { under_pressure("read-copy"); }
TEST_CASE("fileserve pipeline under memory pressure", "[fileserve][pressure]") {
    under_pressure("pipeline", {{"fileserve.chunk", "16KiB"}});
}
TEST_CASE("fileserve sendfile under memory pressure", "[fileserve][pressure]") { under_pressure("sendfile"); }
TEST_CASE("fileserve sendfile with its pin-down cache under memory pressure", "[fileserve][pressure]") {
    under_pressure("sendfile", {{"fileserve.sendfile-cache", "true"}});
}
TEST_CASE("fileserve mmap-fault under memory pressure", "[fileserve][pressure]") {
    under_pressure("mmap-fault", {{"smmu-driver.fault-mode", "terminate"}});
}
TEST_CASE("fileserve kernel-copy under memory pressure", "[fileserve][pressure]") { under_pressure("kernel-copy"); }

// ---- THP collapse of the server's and the clients' anonymous buffers

namespace {
void collapsing(const char* m) {
    SystemSim s(kBase, method(m, "cold") + Settings{{"vm.thp", "madvise"}, {"fileserve.requests", "12"},
                                                    {"fs.file-size", "256KiB"}});
    Effect e;
    Options o;
    o.thp_advise_after = sc_core::sc_time(10, sc_core::SC_US);
    auto agent = start(s, Situation::Thp, {0, 1, 2}, e, o);
    checked(s, 24, 24 * 256 * 1024);
    CHECK(e.rounds > 0);
}
}  // namespace

TEST_CASE("fileserve read-copy with THP collapse of the buffers", "[fileserve][thp]") { collapsing("read-copy"); }
TEST_CASE("fileserve pipeline with THP collapse of the buffers", "[fileserve][thp]") { collapsing("pipeline"); }
TEST_CASE("fileserve sendfile with THP collapse of the clients' buffers", "[fileserve][thp]") { collapsing("sendfile"); }
TEST_CASE("fileserve mmap-fault with THP collapse of the clients' buffers", "[fileserve][thp]") {
    collapsing("mmap-fault");
}
TEST_CASE("fileserve kernel-copy with THP collapse of the buffers", "[fileserve][thp]") { collapsing("kernel-copy"); }

// ---- refusals

TEST_CASE("fileserve: combinations that cannot work are refused before simulation", "[fileserve][config]") {
    auto refusal = [](const Settings& extra) {
        Settings all = kBase.settings;
        for (const auto& kv : extra) all.push_back(kv);
        return config_refusal(all);
    };
    CHECK_THAT(refusal({{"fileserve.method", "mmap-fault"}, {"rdma.strategy", "pin"}}),
               Catch::Contains("rdma.strategy"));
    CHECK_THAT(refusal({{"fileserve.method", "mmap-fault"}, {"smmu-driver.fault-mode", "terminate"},
                        {"dma.fault-tolerant", "false"}}),
               Catch::Contains("dma.fault-tolerant"));
    CHECK_THAT(refusal({{"fileserve.clients", "3"}}), Catch::Contains("fileserve.clients"));
    CHECK_THAT(refusal({{"fileserve.sendfile-cache", "true"}}), Catch::Contains("fileserve.sendfile-cache"));
    CHECK_THAT(refusal({{"fs.files", "0"}}), Catch::Contains("fs.files"));
    CHECK_THAT(refusal({{"smmu.enabled", "false"}, {"rdma.strategy", "pin"}}), Catch::Contains("smmu.enabled"));
    CHECK_THAT(refusal({{"fileserve.request-size", "6000B"}}), Catch::Contains("fileserve.request-size"));
    CHECK_THAT(refusal({{"fileserve.method", "kernel-copy"}, {"dma.event-counters", "2"}}),
               Catch::Contains("dma.event-counters"));
    CHECK_THAT(refusal({{"rdma.channels", "2"}}), Catch::Contains("rdma.channels"));
}
