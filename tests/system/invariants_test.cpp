// Run-level invariants (src/invariants.*): a clean run passes them all, and
// each one fires when the figure it guards is made to lie. The lies are
// planted in the statistics after a real run, since a correct simulator
// cannot be made to produce them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "src/sim/invariants.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;

namespace {

const Settings kSmall = {
    {"workload.message-size", "4KiB"}, {"workload.total-bytes", "64KiB"}, {"workload.window", "1"}};

RunFigures figures(SystemSim& s) {
    RunFigures f = run_figures(*s.sys);
    f.link_util_max = 0.5;
    return f;
}

// The statistic a real run registered, to plant a lie in.
Counter& counter(SystemSim& s, const std::string& name) {
    const Counter* c = s.stats.find_counter(name);
    REQUIRE(c);
    return const_cast<Counter&>(*c);
}
Scalar& scalar(SystemSim& s, const std::string& name) {
    const Scalar* c = s.stats.find_scalar(name);
    REQUIRE(c);
    return const_cast<Scalar&>(*c);
}

bool fired(const std::vector<Violation>& v, const std::string& name) {
    return std::any_of(v.begin(), v.end(), [&](const Violation& x) { return x.invariant == name; });
}

// Runs the small stream, plants `lie`, and returns what the checks say.
std::vector<Violation> check_after(const std::function<void(SystemSim&, RunFigures&)>& lie,
                                   const Settings& settings = kSmall) {
    SystemSim s(settings);
    s.run();
    REQUIRE(s.finished());
    RunFigures f = figures(s);
    lie(s, f);
    return check_invariants(*s.sys, s.stats, f);
}

}   // namespace

TEST_CASE("invariants: a clean run passes every check, with its throughput under the payload ceiling", "[invariants]") {
    const auto v = check_after([](SystemSim&, RunFigures&) {});
    INFO(describe(v));
    CHECK(v.empty());
}

TEST_CASE("invariants: a transfer posted and never finished is caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures&) { s.log().posted_count.inc(); });
    CHECK(fired(v, "transfers-conserved"));
}

TEST_CASE("invariants: bytes delivered but not verified are caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures&) { s.log().bytes_delivered.inc(4096); });
    CHECK(fired(v, "bytes-verified"));
}

TEST_CASE("invariants: payload delivered other than the workload announced is caught", "[invariants]") {
    // The stream announced total-bytes (run --check prints it); a byte more
    // delivered and verified is no longer what it planned.
    const auto v = check_after([](SystemSim& s, RunFigures&) {
        s.log().bytes_delivered.inc(1);
        s.log().bytes_verified.inc(1);
    });
    INFO(describe(v));
    CHECK(fired(v, "planned-bytes"));
    CHECK_FALSE(fired(v, "bytes-verified"));
}

TEST_CASE("invariants: a completion seen before the engine wrote it is caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures&) { counter(s, "node0.rdma.early_completions").inc(); });
    CHECK(fired(v, "completion-after-engine"));
}

TEST_CASE("invariants: an access to a frame before the SSD read filling it ended is caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures&) {
        Dram& d = s.sys->node(1).dram;
        d.hold(0, Dram::kPageSize, sc_core::sc_max_time());   // registers early_accesses
        counter(s, std::string(d.name()) + ".early_accesses").inc();
    });
    CHECK(fired(v, "io-visibility"));
}

TEST_CASE("invariants: a link busier than the run is caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures& f) {
        scalar(s, std::string(s.sys->node(1).eject.name()) + ".busy_time").add(f.run_s * 2e6);
    });
    CHECK(fired(v, "link-utilisation"));
}

TEST_CASE("invariants: link_util_max above 1 is caught", "[invariants]") {
    const auto v = check_after([](SystemSim&, RunFigures& f) { f.link_util_max = 1.2; });
    CHECK(fired(v, "link-utilisation"));
}

TEST_CASE("invariants: payload carried faster than the wire is caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures&) {
        counter(s, std::string(s.sys->node(0).inject.name()) + ".payload_bytes").inc(1ull << 30);
    });
    CHECK(fired(v, "link-payload"));
}

TEST_CASE("invariants: a credit buffer holding more than it has is caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures&) {
        Link& l = s.sys->node(0).inject;
        scalar(s, std::string(l.name()) + ".vc0.buffer_hwm").set(l.params().buffer_flits + 1);
    });
    CHECK(fired(v, "credit-overflow"));
}

namespace {
// A stream from one board to the other over cut links (board-link.handoff = message).
const Settings kCut = {{"topology.kind", "torus"},
                       {"topology.x", "2"},
                       {"workload.dst-node", "7"},
                       {"workload.message-size", "4KiB"},
                       {"workload.total-bytes", "64KiB"},
                       {"workload.window", "2"},
                       {"router.link-order", "time-approximate"},
                       {"board-link.handoff", "message"}};
}   // namespace

TEST_CASE("invariants: a clean run over cut links passes every check, each packet message delivered and answered",
          "[invariants][handoff]") {
    std::uint64_t posted = 0;
    const auto v = check_after(
        [&](SystemSim& s, RunFigures&) {
            for (const auto& l : s.sys->links())
                if (l->cut_near()) {
                    posted += l->cut_near()->packets_posted();
                    CHECK(l->cut_far()->packets_delivered() == l->cut_near()->packets_posted());
                    CHECK(l->cut_far()->credits_posted() == l->cut_near()->credits_received());
                }
        },
        kCut);
    INFO(describe(v));
    CHECK(v.empty());
    CHECK(posted > 0);
}

TEST_CASE("invariants: a packet message posted to a cut link and never delivered is caught", "[invariants][handoff]") {
    const auto v = check_after(
        [](SystemSim& s, RunFigures&) { counter(s, "x0y0z0f1_to_x1y0z0f1.handoff.packets_posted").inc(); }, kCut);
    CHECK(fired(v, "handoff-delivered"));
}

TEST_CASE("invariants: a packet a cut link's far end refused is caught", "[invariants][handoff]") {
    const auto v =
        check_after([](SystemSim& s, RunFigures&) { counter(s, "x0y0z0f1_to_x1y0z0f1.handoff.refused").inc(); }, kCut);
    CHECK(fired(v, "handoff-delivered"));
}

TEST_CASE("invariants: cores busier than the run was long are caught by the energy check", "[invariants]") {
    SystemSim s(kSmall);
    s.run();
    REQUIRE(s.finished());
    const RunFigures f = figures(s);
    CHECK_FALSE(fired(check_invariants(*s.sys, s.stats, f), "energy"));
    // The two nodes' eight cores had 8 x the run; claim ten times the run busy.
    scalar(s, "node0.cpu.cores_busy_time").set(10 * sc_core::sc_time_stamp().to_seconds() * 1e6);
    CHECK(fired(check_invariants(*s.sys, s.stats, f), "energy"));
}

TEST_CASE("invariants: a busy time below zero is caught", "[invariants]") {
    const auto v = check_after([](SystemSim& s, RunFigures&) {
        scalar(s, "node0.cpu.cores_busy_time").set(-1.75e-11);
        scalar(s, "node1.dram.busy_time").set(-1.75e-11);
    });
    INFO(describe(v));
    CHECK(fired(v, "busy-time"));
    CHECK(describe(v).find("node0.cpu.cores_busy_time") != std::string::npos);
    CHECK(describe(v).find("node1.dram.busy_time") != std::string::npos);
}

TEST_CASE("invariants: throughput above the receivers' payload ceiling is caught", "[invariants]") {
    SystemSim s(kSmall);
    s.run();
    REQUIRE(s.finished());
    RunFigures f = figures(s);
    // The post window's throughput, the higher of the two, is held to it.
    f.post_window_gbps = 14.3;   // above 16 Gb/s x 256/288 = 14.22
    CHECK(fired(check_invariants(*s.sys, s.stats, f), "throughput-ceiling"));
    f.post_window_gbps = 14.2;
    CHECK_FALSE(fired(check_invariants(*s.sys, s.stats, f), "throughput-ceiling"));
}

TEST_CASE("invariants: an end-to-end span shorter than the post window is caught", "[invariants]") {
    // The headline (end to end, from the first action) can never beat the
    // post window's figure, and no workload posts before it starts.
    SystemSim s(kSmall);
    s.run();
    REQUIRE(s.finished());
    RunFigures f = figures(s);
    // A clean run: the first action before the first post, the headline
    // below the post window's.
    CHECK(s.log().first_action < s.log().first_post);
    CHECK(f.throughput_gbps < f.post_window_gbps);
    CHECK(f.throughput_gbps > 0);
    CHECK_FALSE(fired(check_invariants(*s.sys, s.stats, f), "end-to-end-span"));
    f.throughput_gbps = f.post_window_gbps * 1.2;
    CHECK(fired(check_invariants(*s.sys, s.stats, f), "end-to-end-span"));
    f = figures(s);
    s.log().first_action = s.log().first_post + sc_core::sc_time(1, sc_core::SC_US);
    CHECK(fired(check_invariants(*s.sys, s.stats, f), "end-to-end-span"));
}

namespace {
Settings small_reads() {
    Settings s = kSmall;
    s.push_back({"workload.operation", "read"});
    return s;
}
}   // namespace

TEST_CASE("invariants: a clean run of RDMA reads passes every check", "[invariants][read]") {
    const auto v = check_after([](SystemSim&, RunFigures&) {}, small_reads());
    INFO(describe(v));
    CHECK(v.empty());
}

TEST_CASE("invariants: a read request a responder took and never ended is caught", "[invariants][read]") {
    const auto v =
        check_after([](SystemSim& s, RunFigures&) { counter(s, "node0.dma.read_requests").inc(); }, small_reads());
    CHECK(fired(v, "reads-conserved"));
}

TEST_CASE("invariants: a read posted and never completed is caught", "[invariants][read]") {
    const auto v =
        check_after([](SystemSim& s, RunFigures&) { counter(s, "node1.dma.reads_posted").inc(); }, small_reads());
    CHECK(fired(v, "reads-conserved"));
}

namespace {
Settings small_locks() {
    return {{"topology.kind", "qfdb"},
            {"topology.nodes", "4"},
            {"workload.kind", "lock"},
            {"lock.kind", "mcs"},
            {"lock.acquisitions", "5"}};
}
}   // namespace

TEST_CASE("invariants: a clean run of network atomics (the lock workload) passes every check", "[invariants][atomic]") {
    const auto v = check_after([](SystemSim&, RunFigures&) {}, small_locks());
    INFO(describe(v));
    CHECK(v.empty());
}

TEST_CASE("invariants: an atomic posted and never completed is caught", "[invariants][atomic]") {
    const auto v =
        check_after([](SystemSim& s, RunFigures&) { counter(s, "node2.dma.atomics_posted").inc(); }, small_locks());
    CHECK(fired(v, "atomics-conserved"));
}

TEST_CASE("invariants: a clean lock run of two jobs passes every check", "[invariants][atomic]") {
    Settings two = small_locks();
    two.push_back({"node.processes", "2"});
    const auto v = check_after([](SystemSim&, RunFigures&) {}, two);
    INFO(describe(v));
    CHECK(v.empty());
}

TEST_CASE("invariants: an engine operation no lock job posted is caught over the jobs", "[invariants][atomic]") {
    Settings two = small_locks();
    two.push_back({"node.processes", "2"});
    const auto v = check_after([](SystemSim& s, RunFigures&) { counter(s, "node1.dma.transfers_posted").inc(); }, two);
    CHECK(fired(v, "engine-operations"));
}

TEST_CASE("invariants: an atomic executed twice at its target is caught", "[invariants][atomic]") {
    const auto v =
        check_after([](SystemSim& s, RunFigures&) { counter(s, "node0.dma.atomics_executed").inc(); }, small_locks());
    CHECK(fired(v, "atomics-conserved"));
}

namespace {

// Runs the small stream with a region over its whole run (begun before,
// ended after), plants `lie` in the region's statistics or figures, and
// returns what the region's checks say.
std::vector<Violation> check_region_after(const std::function<void(StatRegistry&, RegionFigures&)>& lie) {
    SystemSim s(kSmall);
    s.stats.will_read();
    s.stats.begin_window(0);
    s.run();
    REQUIRE(s.finished());
    s.stats.end_window(sc_core::sc_time_stamp().value());
    StatRegistry region = s.stats.window();
    RegionFigures f;
    f.end_s = sc_core::sc_time_stamp().to_seconds();
    f.stats_s = f.end_s;
    f.throughput_gbps = 1.0;
    f.link_util_max = 0.5;
    lie(region, f);
    return check_region(*s.sys, s.stats, region, f);
}

}   // namespace

TEST_CASE("invariants: a clean region passes its checks", "[invariants][roi]") {
    const auto v = check_region_after([](StatRegistry&, RegionFigures&) {});
    INFO(describe(v));
    CHECK(v.empty());
}

TEST_CASE("invariants: a region that counted more than the whole run is caught", "[invariants][roi]") {
    const auto v = check_region_after([](StatRegistry& r, RegionFigures&) {
        const_cast<Counter*>(r.find_counter("workload.bytes_delivered"))->inc(1);
    });
    CHECK(fired(v, "region-within-run"));
}

TEST_CASE("invariants: a region outside the run is caught", "[invariants][roi]") {
    CHECK(fired(check_region_after([](StatRegistry&, RegionFigures& f) { f.begin_s = f.end_s * 2; }), "region-span"));
}

TEST_CASE("invariants: a link busier than the region is caught", "[invariants][roi]") {
    CHECK(fired(check_region_after([](StatRegistry&, RegionFigures& f) { f.link_util_max = 1.5; }),
                "region-link-utilisation"));
}

TEST_CASE("invariants: a region's throughput above the payload ceiling is caught", "[invariants][roi]") {
    CHECK(fired(check_region_after([](StatRegistry&, RegionFigures& f) { f.throughput_gbps = 1e6; }),
                "region-throughput-ceiling"));
}

TEST_CASE("invariants: a region's cores busier than it was long are caught by its energy check", "[invariants][roi]") {
    CHECK(fired(check_region_after([](StatRegistry&, RegionFigures& f) { f.stats_s = 1e-9; }), "region-energy"));
}

namespace {
Settings cold_prefetch() {
    Settings cold = kSmall;
    cold.push_back({"rdma.prefetch", "advise"});
    cold.push_back({"workload.populate", "false"});
    cold.push_back({"workload.fill-source", "false"});
    return cold;
}
}   // namespace

TEST_CASE("invariants: a clean run with prefetch advice passes every check", "[invariants][prefetch]") {
    const auto v = check_after([](SystemSim&, RunFigures&) {}, cold_prefetch());
    INFO(describe(v));
    CHECK(v.empty());
}

TEST_CASE("invariants: a prefetch worker making present more pages than were advised is caught",
          "[invariants][prefetch]") {
    const auto v = check_after(
        [](SystemSim& s, RunFigures&) {
            Counter& advised = counter(s, "node1.rdma.prefetch.advised_pages");
            counter(s, "node1.rdma.prefetch.populated_pages").inc(advised.value() + 1);
        },
        cold_prefetch());
    CHECK(fired(v, "prefetch-advised-only"));
}
