// The fileserve workload (workloads/README.md "File serving") in the whole
// system: every method with a warm and a cold page cache, under memory
// pressure (the server's cache reclaimed while serving), with THP collapse of
// the server's and clients' anonymous buffers, mmap-fault in stall and
// terminate mode; every byte verified against FileSystem::byte, the run's
// invariants (each request answered once, bytes served = verified, the SSD
// read at least what the cache missed, nothing left pinned); and each
// refused combination; several requests served at once, the read form, the
// buffer guard, several processes per node, NetVM, and direct access from
// the board's other FPGAs over the board network; requests that fail (a
// client's read the engine cannot survive, a chunk the server cannot
// register) end as errors, the others verified. One simulation per
// TEST_CASE (or per child process).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "child_process.hpp"

#include "fault_situations.hpp"
#include "src/core/failure_causes.hpp"
#include "src/sim/invariants.hpp"
#include "system_sim.hpp"
#include "workloads/fileserve.hpp"

using namespace vrdmasim;
using namespace vrdmasim::situations;

namespace {

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
    // What `run --check` announced (the self-check planned-bytes holds the
    // run to it) is the test's own count of the ranges' bytes.
    CHECK(s.sys->workloads().at(0)->planned_bytes() == static_cast<std::int64_t>(bytes));
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
    const auto v = s.self_check();
    INFO(describe(v));
    CHECK(v.empty());
    return r;
}

Settings method(const char* m, const char* cache) { return {{"fileserve.method", m}, {"fileserve.cache", cache}}; }

}   // namespace

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

// Ranges that do not divide the file: 24 KiB of 64 KiB, at offset 0 or 24
// KiB (the last 16 KiB never asked for), each range whole, read by the
// clients chunk by chunk (pipeline's read form, 8 KiB chunks: 3 a range):
// announced and delivered, 16 requests of 24 KiB.
TEST_CASE("fileserve ranges of 24 KiB of a 64 KiB file read chunk by chunk: every range whole", "[fileserve]") {
    SystemSim s(kBase, method("pipeline", "warm") + Settings{{"fileserve.request-size", "24KiB"},
                                                             {"fileserve.requests", "8"},
                                                             {"fileserve.chunk", "8KiB"},
                                                             {"workload.operation", "read"}});
    const Run r = checked(s, 16, 16 * 24 * 1024);
    CHECK(r.copies == 16 * 24 * 1024);
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
}   // namespace

TEST_CASE("fileserve read-copy under memory pressure", "[fileserve][pressure]") { under_pressure("read-copy"); }
TEST_CASE("fileserve pipeline under memory pressure", "[fileserve][pressure]") {
    under_pressure("pipeline", {{"fileserve.chunk", "16KiB"}});
}
TEST_CASE("fileserve sendfile under memory pressure", "[fileserve][pressure]") { under_pressure("sendfile"); }
TEST_CASE("fileserve sendfile with its pin-down cache under memory pressure, two requests at once",
          "[fileserve][pressure][depth]") {
    // A flush of the cache (a pin short of memory) spares the pages the
    // other request being served is sending.
    under_pressure("sendfile", {{"fileserve.sendfile-cache", "true"}, {"fileserve.server-depth", "2"}});
}
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
    SystemSim s(kBase, method(m, "cold") +
                           Settings{{"vm.thp", "madvise"}, {"fileserve.requests", "12"}, {"fs.file-size", "256KiB"}});
    Effect e;
    Options o;
    o.thp_advise_after = sc_core::sc_time(10, sc_core::SC_US);
    auto agent = start(s, Situation::Thp, {0, 1, 2}, e, o);
    checked(s, 24, 24 * 256 * 1024);
    CHECK(e.rounds > 0);
}
}   // namespace

TEST_CASE("fileserve read-copy with THP collapse of the buffers", "[fileserve][thp]") { collapsing("read-copy"); }
TEST_CASE("fileserve pipeline with THP collapse of the buffers", "[fileserve][thp]") { collapsing("pipeline"); }
TEST_CASE("fileserve sendfile with THP collapse of the clients' buffers", "[fileserve][thp]") {
    collapsing("sendfile");
}
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
    CHECK_THAT(refusal({{"fileserve.method", "mmap-fault"},
                        {"smmu-driver.fault-mode", "terminate"},
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
    // The rules of docs/composition.md (R11, R12, R14) and direct access's own.
    CHECK_THAT(refusal({{"fileserve.method", "kernel-copy"}, {"rdma.buffer-guard", "mprotect"}}),
               Catch::Contains("has nothing to guard with fileserve.method = kernel-copy"));
    CHECK_THAT(
        refusal({{"fileserve.access", "direct"}, {"fileserve.outstanding", "1"}, {"rdma.buffer-guard", "mprotect"}}),
        Catch::Contains("has nothing to guard with fileserve.access = direct"));
    CHECK_THAT(refusal({{"fileserve.method", "kernel-copy"}, {"workload.operation", "read"}}),
               Catch::Contains("has nothing to choose with fileserve.method = kernel-copy"));
    CHECK_THAT(
        refusal({{"fileserve.access", "direct"}, {"fileserve.outstanding", "1"}, {"workload.operation", "read"}}),
        Catch::Contains("has nothing to choose with fileserve.access = direct"));
    CHECK_THAT(refusal({{"fileserve.access", "direct"}}), Catch::Contains("fileserve.outstanding"));
    CHECK_THAT(
        refusal({{"fileserve.access", "direct"}, {"fileserve.outstanding", "1"}, {"fileserve.server-depth", "2"}}),
        Catch::Contains("fileserve.server-depth"));
    CHECK_THAT(
        refusal({{"fileserve.access", "direct"}, {"fileserve.outstanding", "1"}, {"fileserve.method", "sendfile"}}),
        Catch::Contains("fileserve.method"));
}

// ---- several requests at once (fileserve.server-depth), the read form,
// the guard, NetVM, direct access: each run in a child process (SystemC
// elaborates once per process), which reports its outcome as figures.

namespace {

using Figures = std::map<std::string, double>;

// One run of kBase + `extra` in a child: whether it finished with every
// request answered and every byte verified, no self-check violated and no
// page-cache page left pinned; then its figures.
Figures child_run(const Settings& extra) {
    return in_child_figures([&extra] {
        std::ostringstream os;
        SystemSim s(kBase, extra);
        s.run();
        const TransferLog& l = s.log();
        const auto v = s.self_check();
        std::uint64_t pinned = 0;
        for (unsigned file = 0; file < 4; ++file)
            for (std::uint64_t o = 0; o < kFile; o += 4096) pinned += s.sys->node(0).vm.file_pins(file, o);
        const bool clean = s.finished() && v.empty() && pinned == 0 && l.transfers.value() == kRequests &&
                           l.errors.value() == 0 && l.mismatches.value() == 0 &&
                           l.bytes_verified.value() == kRequests * kFile &&
                           s.sys->workloads().at(0)->planned_bytes() == static_cast<std::int64_t>(kRequests * kFile) &&
                           s.counter("workload.fileserve.answered") == kRequests;
        os << "clean " << clean << "\n";
        os << "gbps "
           << static_cast<double>(l.bytes_delivered.value()) * 8 / (l.last_done - l.first_post).to_seconds() / 1e9
           << "\n";
        os << "peak " << s.scalar("workload.fileserve.concurrent_peak") << "\n";
        os << "ssd_bytes " << s.counter("workload.fileserve.ssd_bytes") << "\n";
        os << "copies " << s.counter("workload.fileserve.copy_bytes") << "\n";
        os << "cpu_ns_per_byte " << s.scalar("workload.fileserve.cpu_ns_per_byte") << "\n";
        os << "guards " << s.stats.sum_counters("rdma.guard.installed") << "\n";
        os << "guard_faults " << s.stats.sum_counters("rdma.guard.faults") << "\n";
        os << "read_requests " << s.stats.sum_counters("dma.read_requests") << "\n";
        os << "remote_bytes " << s.stats.sum_counters("remote_fs.bytes_delivered") << "\n";
        os << "remote_reads " << s.stats.sum_counters("remote_fs.reads") << "\n";
        os << "remote_served " << s.stats.sum_counters("remote_fs.served") << "\n";
        os << "netvm_copies " << s.stats.sum_counters("dma.kernel_copy_bytes") << "\n";
        if (!v.empty()) std::cerr << describe(v) << "\n";
        return os.str();
    });
}

// A child's run finished clean (every byte verified, no self-check violated).
void clean(const Figures& f) {
    REQUIRE(f.count("clean"));
    CHECK(f.at("clean") == 1);
}

void at_depths(const char* m) {
    const Figures one = child_run(method(m, "warm") + Settings{{"fileserve.server-depth", "1"}});
    const Figures two = child_run(method(m, "warm") + Settings{{"fileserve.server-depth", "2"}});
    clean(one);
    clean(two);
    // It served as many at once as it could, never more than its depth.
    CHECK(one.at("peak") == 1);
    CHECK(two.at("peak") == 2);
    INFO(m << ": depth 1 " << one.at("gbps") << " Gb/s, depth 2 " << two.at("gbps") << " Gb/s");
    // A second request's CPU work or transfer overlaps the first's.
    CHECK(two.at("gbps") > one.at("gbps") * 1.05);
}

}   // namespace

TEST_CASE("fileserve server-depth 2, read-copy: a second request's read() overlaps the first's transfer",
          "[fileserve][depth]") {
    at_depths("read-copy");
}
TEST_CASE("fileserve server-depth 2, sendfile", "[fileserve][depth]") { at_depths("sendfile"); }
TEST_CASE("fileserve server-depth 2, pipeline", "[fileserve][depth]") { at_depths("pipeline"); }

TEST_CASE("fileserve server-depth 4, mmap-fault and kernel-copy, cold: every byte verified", "[fileserve][depth]") {
    for (const char* m : {"mmap-fault", "kernel-copy"}) {
        INFO(m);
        const Figures f = child_run(method(m, "cold") + Settings{{"fileserve.server-depth", "4"}});
        clean(f);
        CHECK(f.at("ssd_bytes") > 0);
        CHECK(f.at("peak") >= 2);
        CHECK(f.at("peak") <= 4);
    }
}

// ---- the read form: the client reads the range the server prepared

TEST_CASE("fileserve read form: read-copy, sendfile and mmap-fault, one and two requests at once",
          "[fileserve][read]") {
    for (const char* m : {"read-copy", "sendfile", "mmap-fault"})
        for (const char* depth : {"1", "2"}) {
            INFO(m << ", depth " << depth);
            const Figures f = child_run(method(m, "cold") +
                                        Settings{{"workload.operation", "read"}, {"fileserve.server-depth", depth}});
            clean(f);
            CHECK(f.at("ssd_bytes") > 0);
            // The clients' engines read: the server's engine served a read
            // request per request.
            CHECK(f.at("read_requests") == kRequests);
        }
}

// pipeline's read form: the server read()s chunk k into the next of its
// fileserve.buffers bounce buffers and tells the client, which RDMA-reads
// it and says Done; only then is the buffer reused. 16 KiB chunks: 4 per
// 64 KiB request, through 2 buffers.
TEST_CASE("fileserve read form: pipeline chunk by chunk through the rotating buffers", "[fileserve][read]") {
    for (const char* depth : {"1", "2"}) {
        INFO("server-depth " << depth);
        const Settings chunks{{"fileserve.chunk", "16KiB"}, {"fileserve.server-depth", depth}};
        const Figures wr = child_run(method("pipeline", "cold") + chunks);
        const Figures rd = child_run(method("pipeline", "cold") + chunks + Settings{{"workload.operation", "read"}});
        clean(wr);
        clean(rd);
        // Each chunk is one RDMA read the server's engine served; the write
        // form pushes the same chunks and serves none.
        CHECK(rd.at("read_requests") == kRequests * 4);
        CHECK(wr.at("read_requests") == 0);
        // The same server work: one read() copy per byte, the cache filled from the SSD.
        CHECK(rd.at("copies") == kRequests * kFile);
        CHECK(wr.at("copies") == kRequests * kFile);
        CHECK(rd.at("ssd_bytes") > 0);
        // Each chunk's hand-over (its message, the read request's trip to
        // the server, the Done before its buffer is reused) is on top of the
        // data's time: the read form is slower than the write form.
        INFO("write " << wr.at("gbps") << " Gb/s, read " << rd.at("gbps") << " Gb/s");
        CHECK(rd.at("gbps") < wr.at("gbps"));
    }
}

// The rotation's waits: with 4 KiB chunks a buffer's hand-over (the
// message, the client's read, its Done) takes longer than the server's
// read() of the next chunk, so the server waits for a buffer; more buffers
// wait less. The read form's hand-over is longer than a write's completion,
// so it gains more from them.
TEST_CASE("fileserve read form: pipeline waits for its buffers' Done messages", "[fileserve][read]") {
    const auto run = [](const char* op, const char* buffers) {
        return child_run(method("pipeline", "warm") + Settings{{"fileserve.chunk", "4KiB"},
                                                               {"fileserve.buffers", buffers},
                                                               {"workload.operation", op}});
    };
    const Figures w2 = run("write", "2"), w8 = run("write", "8"), r2 = run("read", "2"), r8 = run("read", "8");
    for (const Figures* f : {&w2, &w8, &r2, &r8}) clean(*f);
    CHECK(r2.at("read_requests") == kRequests * 16);
    CHECK(r8.at("read_requests") == kRequests * 16);
    INFO("write: 2 buffers " << w2.at("gbps") << " Gb/s, 8 buffers " << w8.at("gbps") << "; read: 2 buffers "
                             << r2.at("gbps") << ", 8 buffers " << r8.at("gbps"));
    CHECK(r8.at("gbps") > r2.at("gbps") * 1.1);
    CHECK(r8.at("gbps") / r2.at("gbps") > w8.at("gbps") / w2.at("gbps"));
    CHECK(r2.at("gbps") < w2.at("gbps"));
}

// ---- failures: a request that fails ends as an error, the others verified

namespace {

// One run of kBase + `extra` in a child, whatever its requests' outcome:
// whether it finished and kept its self-checks, what the log counted, what
// the server did (copies, reads its engine served, pins left), why the
// failed transfers failed as the run says it (src/core/failure_causes.hpp).
Figures outcome_run(const Settings& extra) {
    return in_child_figures([&extra] {
        std::ostringstream os;
        SystemSim s(kBase, extra);
        s.run();
        // As the runner ends a run: the cores' busy time trimmed to its end
        // (the hog's pass still running), the timed statistics flushed.
        s.sys->end_run();
        s.stats.flush_timed();
        const TransferLog& l = s.log();
        const auto v = s.self_check();
        if (!v.empty()) std::cerr << describe(v) << "\n";
        std::string why;
        for (const std::string& w : failure_causes::explain(*s.cfg, s.stats)) why += w + "; ";
        const RdmaProcess& server = s.sys->node(0).app;
        os << "finished " << s.finished() << "\n";
        os << "violations " << v.size() << "\n";
        os << "transfers " << l.transfers.value() << "\n";
        os << "errors " << l.errors.value() << "\n";
        os << "mismatches " << l.mismatches.value() << "\n";
        os << "delivered " << l.bytes_delivered.value() << "\n";
        os << "verified " << l.bytes_verified.value() << "\n";
        os << "served " << s.counter("workload.fileserve.served_bytes") << "\n";
        os << "answered " << s.counter("workload.fileserve.answered") << "\n";
        os << "duplicates " << s.counter("workload.fileserve.duplicate_replies") << "\n";
        os << "copies " << s.counter("workload.fileserve.copy_bytes") << "\n";
        os << "read_requests " << s.stats.sum_counters("dma.read_requests") << "\n";
        os << "read_replies_failed " << s.stats.sum_counters("dma.read_replies_failed") << "\n";
        os << "smmu_faults " << s.stats.sum_counters("dma.smmu_faults") << "\n";
        os << "registration_failures " << s.stats.sum_counters("rdma.registration_failures") << "\n";
        os << "server_registrations " << s.counter("node0.rdma.registrations") << "\n";
        os << "server_deregistrations " << s.counter("node0.rdma.deregistrations") << "\n";
        os << "server_pinned " << s.sys->node(0).vm.pinned_bytes(server.pid()) << "\n";
        os << "guards " << s.stats.sum_counters("rdma.guard.installed") << "\n";
        os << "guards_lifted " << s.stats.sum_counters("rdma.guard.lifted") << "\n";
        os << "cause_smmu " << (why.find("SMMU fault(s) that the original engine") != std::string::npos) << "\n";
        os << "cause_memlock " << (why.find("pin(s) beyond vm.memlock-limit") != std::string::npos) << "\n";
        os << "cause_read " << (why.find("fileserve read() call(s) short or refused with ENOMEM") != std::string::npos)
           << "\n";
        os << "short_reads " << s.stats.sum_counters("fileserve.short_reads") << "\n";
        os << "cause_pin " << (why.find("fileserve page-cache pin(s) refused") != std::string::npos) << "\n";
        os << "pins_refused " << s.stats.sum_counters("fileserve.pins_refused") << "\n";
        return os.str();
    });
}

// What a user relies on when some requests fail: the run ends with its
// self-checks kept, each request answered once, each failed one counted as
// an error (the log's, `failed` of them), and every byte of the others
// delivered and verified.
void failed_cleanly(const Figures& f, std::uint64_t failed) {
    REQUIRE(f.count("finished"));
    CHECK(f.at("finished") == 1);
    CHECK(f.at("violations") == 0);
    CHECK(f.at("transfers") == kRequests);
    CHECK(f.at("answered") == kRequests);
    CHECK(f.at("duplicates") == 0);
    CHECK(f.at("errors") == failed);
    CHECK(f.at("mismatches") == 0);
    CHECK(f.at("delivered") == (kRequests - failed) * kFile);
    CHECK(f.at("verified") == (kRequests - failed) * kFile);
    CHECK(f.at("served") == (kRequests - failed) * kFile);
}

}   // namespace

// A client's RDMA read that the engine cannot survive: its receive area
// cold (never touched), the SMMU driver in terminate mode, the original
// engine (the first touch of a slot fails the transfer). In the read form
// chunk 0's read fails at the client, whose Done says so; the server, which
// had read() and handed over chunk 1 meanwhile (its 2 buffers), hands over
// no more and sends an error in place of chunk 2's message (16 KiB chunks),
// or nothing more (32 KiB chunks: chunk 1 was the last, its message ended
// the hand-over). The write form fails the same requests: the server's
// write into the cold slot fails and it stops posting. One and two
// requests served at once.
TEST_CASE("fileserve pipeline: a client's read that faults fails its request and no other", "[fileserve][failure]") {
    for (const std::uint64_t chunk : {16, 32})
        for (const char* depth : {"1", "2"}) {
            const std::uint64_t parts = kFile / (chunk * 1024);
            INFO(chunk << " KiB chunks, server-depth " << depth);
            const Settings cold{{"fileserve.method", "pipeline"},
                                {"fileserve.cache", "cold"},
                                {"fileserve.chunk", std::to_string(chunk) + "KiB"},
                                {"fileserve.server-depth", depth},
                                {"workload.populate", "false"},
                                {"smmu-driver.fault-mode", "terminate"},
                                {"dma.fault-tolerant", "false"},
                                {"rdma.buffer-guard", "mprotect"}};
            const Figures rd = outcome_run(cold + Settings{{"workload.operation", "read"}});
            const Figures wr = outcome_run(cold + Settings{{"workload.operation", "write"}});
            REQUIRE(rd.count("errors"));
            REQUIRE(wr.count("errors"));
            const auto failed = static_cast<std::uint64_t>(rd.at("errors"));
            INFO("failed: read form " << failed << ", write form " << wr.at("errors"));
            CHECK(failed > 0);
            CHECK(failed < kRequests);
            for (const Figures* f : {&rd, &wr}) {
                failed_cleanly(*f, failed);
                CHECK(f->at("smmu_faults") == failed);   // each failed request met one fault
                CHECK(f->at("cause_smmu") == 1);
                // Every guard (the server's chunks, the clients' slots)
                // lifted, those of the failed requests too.
                CHECK(f->at("guards") > 0);
                CHECK(f->at("guards_lifted") == f->at("guards"));
                // The server read() the failed requests' first two chunks
                // (its two buffers) and no more: it stopped at chunk 0's failure.
                CHECK(f->at("copies") == (kRequests - failed) * kFile + failed * 2 * chunk * 1024);
            }
            // Read form: the client read chunk 0, whose data its SMMU
            // refused, and chunk 1, handed over before the server knew.
            CHECK(rd.at("read_requests") == (kRequests - failed) * parts + failed * 2);
            CHECK(rd.at("read_replies_failed") == failed);
            CHECK(wr.at("read_requests") == 0);
        }
}

// The server's own failure mid hand-over: with rdma.strategy = pin each
// chunk is pinned when registered, and vm.memlock-limit = 176 KiB leaves the
// server room (beyond its library's own locked and pinned pages) for one
// 16 KiB chunk, not two. Each request: chunk 0 read() and handed over,
// chunk 1 read() and its registration refused; once the client's Done for
// chunk 0 has come, the error goes in place of chunk 1's message. Each
// client's next request in the same slot takes its own reply, not a late
// chunk message. Nothing stays pinned.
TEST_CASE("fileserve pipeline: a chunk the server cannot register ends its request as failed mid hand-over",
          "[fileserve][failure]") {
    const Settings tight{{"fileserve.method", "pipeline"}, {"fileserve.cache", "warm"}, {"fileserve.chunk", "16KiB"},
                         {"fileserve.outstanding", "1"},   {"rdma.strategy", "pin"},    {"vm.memlock-limit", "176KiB"}};
    const Figures rd = outcome_run(tight + Settings{{"workload.operation", "read"}});
    const Figures wr = outcome_run(tight + Settings{{"workload.operation", "write"}});
    // The same run with room for the pins: nothing fails.
    const Figures roomy = outcome_run(tight + Settings{{"workload.operation", "read"}, {"vm.memlock-limit", "64MiB"}});
    failed_cleanly(roomy, 0);
    for (const Figures* f : {&rd, &wr}) {
        failed_cleanly(*f, kRequests);
        CHECK(f->at("registration_failures") == kRequests);
        CHECK(f->at("cause_memlock") == 1);
        CHECK(f->at("copies") == kRequests * 2 * 16 * 1024);   // chunks 0 and 1 read(), no more
        // Each chunk registered was deregistered: the server ends with its
        // library's own pins only, as the run without failures does.
        CHECK(f->at("server_pinned") == roomy.at("server_pinned"));
        CHECK(f->at("server_registrations") - f->at("server_deregistrations") ==
              roomy.at("server_registrations") - roomy.at("server_deregistrations"));
    }
    CHECK(rd.at("read_requests") == kRequests);   // each request's chunk 0, read by its client
}

// Two requests at once (server-depth 2), room for two chunks' pins only:
// a request served alone gets both its buffers, one served beside another
// has its registration refused, first chunk or mid hand-over. The others
// deliver every byte, verified.
TEST_CASE("fileserve pipeline read form: registrations refused beside another request and the rest verified",
          "[fileserve][failure][depth]") {
    const Figures f = outcome_run({{"fileserve.method", "pipeline"},
                                   {"fileserve.cache", "warm"},
                                   {"fileserve.chunk", "16KiB"},
                                   {"fileserve.outstanding", "1"},
                                   {"fileserve.server-depth", "2"},
                                   {"rdma.strategy", "pin"},
                                   {"vm.memlock-limit", "208KiB"},
                                   {"workload.operation", "read"}});
    REQUIRE(f.count("errors"));
    const auto failed = static_cast<std::uint64_t>(f.at("errors"));
    INFO(failed << " failed, " << f.at("read_requests") << " chunks read");
    CHECK(failed > 0);
    CHECK(failed < kRequests);
    failed_cleanly(f, failed);
    CHECK(f.at("registration_failures") == failed);
    CHECK(f.at("cause_memlock") == 1);
    // Some failed request had chunks read before its error came.
    CHECK(f.at("read_requests") > (kRequests - failed) * 4);
    // Every chunk registered was deregistered (as in the test above: only
    // the library's own pins are left, 3 registrations).
    CHECK(f.at("server_registrations") - f.at("server_deregistrations") == 3);
}

// The server's read() short of memory: a hog on every node holds all but a
// few of the frames (dram.size leaves 4 MiB beyond the kernel's, no swap to
// push the hog's pages to), so the page cache cannot hold a chunk's pages.
// One request at a time: chunk 0 is read() and handed over, chunk 1's
// read() comes back short and the error goes in place of its message. Two
// at once: each request's first read() gets not a byte (ENOMEM), which
// fails the request as a short read does (it stopped the run before). The
// run says why its requests failed. (The margin is narrow: a few KiB more
// of hog and the server's own setup cannot lock its records; less, and
// every read() finds its frames.)
TEST_CASE("fileserve pipeline: a read() short of memory fails its request mid hand-over or before it",
          "[fileserve][failure]") {
    const Settings starved{{"fileserve.method", "pipeline"}, {"fileserve.cache", "cold"}, {"fileserve.chunk", "16KiB"},
                           {"dram.size", "260MiB"},          {"ssd.swap-size", "4KiB"},   {"hog.bytes", "3570KiB"}};
    const Figures rd = outcome_run(starved + Settings{{"workload.operation", "read"}});
    const Figures wr = outcome_run(starved + Settings{{"workload.operation", "write"}});
    const Figures two =
        outcome_run(starved + Settings{{"workload.operation", "read"}, {"fileserve.server-depth", "2"}});
    for (const Figures* f : {&rd, &wr, &two}) {
        failed_cleanly(*f, kRequests);
        CHECK(f->at("short_reads") == kRequests);
        CHECK(f->at("cause_read") == 1);
    }
    // Chunk 0 whole, 8 KiB of chunk 1, then nothing more read().
    CHECK(rd.at("copies") == kRequests * (16 + 8) * 1024);
    CHECK(wr.at("copies") == rd.at("copies"));
    CHECK(rd.at("read_requests") == kRequests);   // each request's chunk 0, read by its client
    CHECK(two.at("copies") == 0);
    CHECK(two.at("read_requests") == 0);
}

// The same starved node under sendfile: a request's pin of its page-cache
// pages cannot read them in (ENOMEM), which fails that request; the others
// (their pages still cached) are served and verified. The run says why.
TEST_CASE("fileserve sendfile: a pin short of memory fails its request and the others are verified",
          "[fileserve][failure]") {
    const Figures f = outcome_run({{"fileserve.method", "sendfile"},
                                   {"fileserve.cache", "cold"},
                                   {"dram.size", "260MiB"},
                                   {"ssd.swap-size", "4KiB"},
                                   {"hog.bytes", "3570KiB"}});
    REQUIRE(f.count("errors"));
    const auto failed = static_cast<std::uint64_t>(f.at("errors"));
    INFO(failed << " failed");
    CHECK(failed > 0);
    CHECK(failed < kRequests);
    failed_cleanly(f, failed);   // fileserve-nothing-pinned among its self-checks
    CHECK(f.at("pins_refused") == failed);
    CHECK(f.at("cause_pin") == 1);
}

// ---- the buffer guard

TEST_CASE("fileserve with the buffer guard: sources guarded until their records, slots until the reply",
          "[fileserve][guard]") {
    for (const char* m : {"read-copy", "pipeline", "sendfile", "mmap-fault"})
        for (const char* op : {"write", "read"}) {
            INFO(m << ", " << op);
            const Figures f = child_run(method(m, "cold") + Settings{{"rdma.buffer-guard", "mprotect"},
                                                                     {"workload.operation", op},
                                                                     {"fileserve.server-depth", "2"}});
            clean(f);
            // A guard per request at each client (write: the slot; read:
            // get's destination) and at least one per request at the server.
            CHECK(f.at("guards") >= 2 * kRequests);
            CHECK(f.at("guard_faults") == 0);   // nothing touches a buffer in flight
        }
}

// ---- NetVM

TEST_CASE("fileserve with rdma.strategy = netvm into cold receive areas", "[fileserve][netvm]") {
    for (const char* m : {"read-copy", "mmap-fault", "sendfile"}) {
        INFO(m);
        const Figures f = child_run(method(m, "cold") + Settings{{"rdma.strategy", "netvm"},
                                                                 {"smmu-driver.fault-mode", "terminate"},
                                                                 {"workload.populate", "false"}});
        clean(f);
        // The receive slots were never touched: NetVM's kernel copied the
        // packets that found their pages absent.
        CHECK(f.at("netvm_copies") > 0);
    }
}

// ---- direct access from the board's FPGAs without the SSD

TEST_CASE("fileserve direct access: the clients' page caches fill over the board network", "[fileserve][direct]") {
    const Settings direct{{"fileserve.access", "direct"}, {"fileserve.outstanding", "1"}};
    const Figures cold = child_run(direct + Settings{{"fileserve.cache", "cold"}});
    const Figures warm = child_run(direct + Settings{{"fileserve.cache", "warm"}});
    clean(cold);
    clean(warm);
    // Every byte a client read came over the board links from node 0's SSD
    // (both clients are FPGAs of node 0's board without the SSD).
    CHECK(cold.at("remote_bytes") > 0);
    CHECK(cold.at("ssd_bytes") == cold.at("remote_bytes"));
    CHECK(cold.at("remote_served") == cold.at("remote_reads"));
    CHECK(cold.at("copies") == kRequests * kFile);   // one read() copy per byte
    CHECK(warm.at("ssd_bytes") == 0);   // the warm pass filled each client's cache
    CHECK(warm.at("cpu_ns_per_byte") < cold.at("cpu_ns_per_byte"));
    INFO("direct: cold " << cold.at("gbps") << " Gb/s, warm " << warm.at("gbps") << " Gb/s");
    CHECK(warm.at("gbps") > cold.at("gbps"));
}

// ---- several processes per node (one simulation each)

namespace {
void two_processes(const char* m) {
    SystemSim s(kBase, method(m, "cold") + Settings{{"node.processes", "2"}});
    s.run();
    REQUIRE(s.finished());
    s.check_all_verified(kRequests, kRequests * kFile);
    REQUIRE(s.sys->workloads().size() == 2);
    for (const auto& w : s.sys->workloads()) CHECK(w->planned_bytes() == static_cast<std::int64_t>(kRequests * kFile));
    for (const char* job : {"workload.", "job1.workload."}) {
        INFO(job);
        CHECK(s.counter(std::string(job) + "fileserve.answered") == kRequests);
        CHECK(s.counter(std::string(job) + "fileserve.served_bytes") == kRequests * kFile);
        CHECK(s.counter(std::string(job) + "bytes_verified") == kRequests * kFile);
        CHECK(s.counter(std::string(job) + "data_mismatches") == 0);
    }
    // The node-wide figures are measured once, into job 0's: the SSD read
    // each file's pages once for both servers (nothing reclaimed).
    CHECK(s.counter("workload.fileserve.ssd_bytes") > 0);
    CHECK(s.counter("workload.fileserve.ssd_bytes") <= 4 * kFile);
    CHECK(s.counter("job1.workload.fileserve.ssd_bytes") == 0);
    CHECK(s.scalar("workload.fileserve.cpu_ns_per_byte") > 0);
    CHECK(s.scalar("job1.workload.fileserve.cpu_ns_per_byte") == 0);
    // Each server's own pins (sendfile: its requests' pages).
    if (std::string(m) == "sendfile") {
        CHECK(s.counter("workload.fileserve.pins") == kRequests * kFile / 4096);
        CHECK(s.counter("job1.workload.fileserve.pins") == kRequests * kFile / 4096);
    }
    for (unsigned f = 0; f < 4; ++f)
        for (std::uint64_t o = 0; o < kFile; o += 4096) CHECK(s.sys->node(0).vm.file_pins(f, o) == 0);
    const auto v = s.self_check();
    INFO(describe(v));
    CHECK(v.empty());
}
}   // namespace

TEST_CASE("fileserve with two processes per node, read-copy: two servers share the node's page cache and SSD",
          "[fileserve][procs]") {
    two_processes("read-copy");
}
TEST_CASE("fileserve with two processes per node, sendfile: each server's own pins", "[fileserve][procs]") {
    two_processes("sendfile");
}
