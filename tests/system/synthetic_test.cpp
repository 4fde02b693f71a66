// Synthetic traffic (workload.kind = synthetic, workloads/synthetic.hpp) in
// the whole system: a message alone takes exactly its route's zero-load
// sum; a light offered load is honoured; a saturated network accepts no
// more than the channel-load bound (src/sim/channel_load.hpp) allows; the
// self-checks catch planted lies; bad settings are refused (exit 2).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "run_binary.hpp"
#include "src/sim/channel_load.hpp"
#include "src/sim/invariants.hpp"
#include "system_sim.hpp"
#include "temp_dir.hpp"
#include "workloads/synthetic.hpp"

using namespace vrdmasim;

namespace {

// configs/torus.ini's 3 x 2 x 2 QFDBs (48 MPSoCs).
const Settings kTorus{{"topology.kind", "torus"},
                      {"topology.x", "3"},
                      {"topology.y", "2"},
                      {"topology.z", "2"},
                      {"workload.kind", "synthetic"}};

SyntheticWorkload& workload_of(SystemSim& s) { return dynamic_cast<SyntheticWorkload&>(s.sys->workload()); }

const Histogram& histogram(SystemSim& s, const std::string& name) {
    const Histogram* h = s.stats.find_histogram(name);
    REQUIRE(h);
    return *h;
}

// Runs to the end; every self-check must pass.
void run_clean(SystemSim& s) {
    s.run();
    REQUIRE(s.finished());
    const auto v = check_invariants(*s.sys, s.stats, run_figures(*s.sys));
    INFO(describe(v));
    CHECK(v.empty());
}

// `vrdmasim COMMAND ARGS` through the shell (a run's outputs in a
// temporary directory): its exit status and stderr.
std::pair<int, std::string> run_vrdmasim(const std::string& command, const std::string& args) {
    vrdmasim_test::TempDir dir("synthetic-cli");
    const std::string cmd = std::string(VRDMASIM_EXE) + " " + command + " " + args +
                            (command == "run" ? " -o " + (dir / "out") : std::string()) + " >" + (dir / "stdout") +
                            " 2>" + (dir / "stderr");
    const int st = std::system(cmd.c_str());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, vrdmasim_test::slurp_file(dir / "stderr")};
}

}   // namespace

TEST_CASE("synthetic: at zero load a message takes exactly its route's zero-load sum") {
    // Some 160 messages over 200 us on 48 nodes: most meet no other packet
    // on their way and take, to the picosecond, their route's link, router
    // and serialisation delays; a few meet another message's packet (an
    // ACK on a shared link) and wait for it, never less than the sum.
    SystemSim s(kTorus + Settings{{"synthetic.load", "0.002"}, {"synthetic.measure", "200us"}});
    run_clean(s);
    const Histogram& net = histogram(s, "workload.synthetic_net_latency");
    const Histogram& zero = histogram(s, "workload.synthetic_zero_load");
    const Histogram& excess = histogram(s, "workload.synthetic_excess");
    REQUIRE(net.count() >= 100);
    CHECK(excess.count() == net.count());
    CHECK(excess.min() == 0);
    CHECK(excess.quantile(0.9) == 0);   // nine in ten exactly on their sum
    CHECK(net.mean() >= zero.mean());
    CHECK(net.mean() < zero.mean() * 1.01);
    // The whole latency adds the source's side (the library's post, the
    // engine reading the message) on top.
    CHECK(histogram(s, "workload.synthetic_latency").min() > net.min());
    CHECK(workload_of(s).figures().saturated == false);
}

TEST_CASE("synthetic: a message of several packets is never faster than its zero-load sum") {
    SystemSim s(kTorus + Settings{{"synthetic.load", "0.002"}, {"synthetic.message-size", "1KiB"}});
    run_clean(s);
    CHECK(workload_of(s).message_flits() == 72);
    const Histogram& excess = histogram(s, "workload.synthetic_excess");
    REQUIRE(excess.count() >= 5);
    CHECK(excess.min() >= 0);
}

namespace {

// A light load is what the sources create, and what the destinations accept.
void light_load(const char* arrivals) {
    SystemSim s(kTorus + Settings{{"synthetic.load", "0.05"}, {"synthetic.arrivals", arrivals}});
    run_clean(s);
    const SyntheticWorkload::Figures& f = workload_of(s).figures();
    // Some 830 messages created in the window: a standard error of 3.5 %;
    // four of them.
    const double expected = 0.05 * (40e-6 / 6.4e-9) / 18 * 48;
    REQUIRE(f.measured > 0.8 * expected);
    CHECK(std::abs(f.offered / 0.05 - 1) < 4 / std::sqrt(expected));
    // Below saturation the network takes what it is offered: the backlog (a
    // few messages in flight per node) moves by little.
    CHECK(std::abs(f.accepted - f.offered) < 0.03 * f.offered);
    CHECK(f.saturated == false);
    CHECK(f.measured_delivered == f.measured);
    CHECK(f.created == f.delivered + f.abandoned);
}

// A saturated network accepts no more than its bound. For uniform and
// tornado every source's flows cross a bottleneck alike, so what the nodes
// accept on average is held to it (a pattern with flows that miss the
// bottleneck, transpose's diagonal, may average above it).
void saturated(const char* pattern) {
    SystemSim s(kTorus + Settings{{"synthetic.pattern", pattern}, {"synthetic.load", "0.6"}});
    run_clean(s);
    const ChannelModel m(*s.cfg);
    const double bound = synthetic_bounds(m, *s.cfg, {synthetic::parse_pattern(pattern)}).at(0).bound.theta;
    const SyntheticWorkload::Figures& f = workload_of(s).figures();
    INFO("accepted " << f.accepted << ", bound " << bound);
    CHECK(f.saturated);
    CHECK(f.abandoned > 0);
    // One message across an end of the window on each bottleneck link (some
    // 170 of its messages in 40 us): under 1 %.
    CHECK(f.accepted <= bound * 1.01);
    CHECK(f.accepted > 0.5 * bound);
}

}   // namespace

TEST_CASE("synthetic: a read at zero load takes its request's route, the responder's turnaround and its data's") {
    // The read form: each node reads its messages from its destination,
    // the request out and the data back. Alone on the network, every read's
    // request and data take, to the picosecond, their routes' zero-load
    // sums, and the responder's engine serves it in between.
    SystemSim s(kTorus +
                Settings{{"workload.operation", "read"}, {"synthetic.load", "0.002"}, {"synthetic.measure", "100us"}});
    run_clean(s);
    SyntheticWorkload& w = workload_of(s);
    REQUIRE(w.reads());
    const Histogram& net = histogram(s, "workload.synthetic_net_latency");
    const Histogram& zero = histogram(s, "workload.synthetic_zero_load");
    const Histogram& excess = histogram(s, "workload.synthetic_excess");
    const Histogram& turnaround = histogram(s, "workload.synthetic_turnaround");
    REQUIRE(net.count() >= 50);
    CHECK(turnaround.count() == net.count());
    CHECK(excess.min() == 0);
    CHECK(excess.quantile(0.9) == 0);   // nine in ten exactly on their sum
    const Counter* exact = s.stats.find_counter("workload.synthetic_exact_zero_load");
    REQUIRE(exact);
    CHECK(exact->value() >= 0.9 * static_cast<double>(net.count()));
    // The turnaround: the engine's setup and its read of the source, at
    // least the responder's setup time.
    CHECK(turnaround.min() > 0);
    CHECK(net.mean() >= zero.mean());
    // The whole latency adds the requester's post and completion.
    CHECK(histogram(s, "workload.synthetic_latency").min() > net.min());
    const SyntheticWorkload::Figures& f = w.figures();
    CHECK(f.saturated == false);
    CHECK(f.measured_delivered == f.measured);
    CHECK(std::abs(f.accepted - f.offered) < 0.2 * f.offered);
    // Every byte read, verified at the requester.
    CHECK(w.log().bytes_verified.value() == w.log().bytes_delivered.value());
    CHECK(w.log().bytes_verified.value() == f.delivered * w.message_bytes());
    CHECK(w.log().errors.value() == 0);
}

namespace {

// Past its bound, the read form saturates below it: the bound of the data
// on the routes back and the requests (and the data's ACKs) on the routes
// there.
void saturated_reads(const char* pattern) {
    SystemSim s(kTorus + Settings{{"workload.operation", "read"},
                                  {"synthetic.pattern", pattern},
                                  {"synthetic.load", "0.6"},
                                  {"synthetic.measure", "20us"},
                                  {"synthetic.drain", "20us"}});
    run_clean(s);
    const ChannelModel m(*s.cfg);
    const ChannelModel::Bound b = synthetic_bounds(m, *s.cfg, {synthetic::parse_pattern(pattern)}).at(0).bound;
    CHECK(b.reads);
    const SyntheticWorkload::Figures& f = workload_of(s).figures();
    INFO("accepted " << f.accepted << ", bound " << b.theta);
    CHECK(f.saturated);
    CHECK(f.accepted <= b.theta * 1.02);
    CHECK(f.accepted > 0.5 * b.theta);
    CHECK(workload_of(s).log().bytes_verified.value() == workload_of(s).log().bytes_delivered.value());
}

}   // namespace

TEST_CASE("synthetic: saturated, uniform reads stay under their channel-load bound") { saturated_reads("uniform"); }
TEST_CASE("synthetic: saturated, tornado reads stay under their channel-load bound") { saturated_reads("tornado"); }

TEST_CASE("synthetic: the read form's bound carries the data back and the requests there") {
    // Tornado on the torus's x ring of 3: node n reads from n + 1 board
    // along x, so the data crosses each x link the other way from the
    // write form's, and the requests go the write form's way.
    ParamRegistry reg;
    declare_all_params(reg);
    auto bound_of = [&reg](const char* operation) {
        Config c(reg);
        for (const auto& [k, v] :
             kTorus + Settings{{"synthetic.pattern", "tornado"}, {"workload.operation", operation}})
            c.set(k, v, "test");
        System::resolve(c);
        return synthetic_bounds(ChannelModel(c), c, {synthetic::Pattern::Tornado}).at(0).bound;
    };
    Config c(reg);
    for (const auto& [k, v] : kTorus) c.set(k, v, "test");
    System::resolve(c);
    const ChannelModel m(c);
    const ChannelModel::Bound wb = bound_of("write"), rb = bound_of("read");
    REQUIRE(!wb.loads.empty());
    REQUIRE(!rb.loads.empty());
    // The busiest channel: a board link carrying its board's 4 data packets
    // (the F1's link to the next board), x0 to x1 for writes, x0 to x2 (the
    // data from x1 back to x0, round the ring) for reads.
    CHECK(m.channels()[wb.loads[0].channel].name == "x0y0z0f1_to_x1y0z0f1");
    CHECK(m.channels()[rb.loads[0].channel].name == "x0y0z0f1_to_x2y0z0f1");
    CHECK(wb.loads[0].flits == 4.0 * wb.data_flits);
    CHECK(rb.loads[0].flits == 4.0 * rb.data_flits);
    CHECK(rb.theta == wb.theta);
    CHECK(rb.response_flits == 4 + 3);   // the request (24 B) and the data's ACK (16 B)
    // The read's zero-load: the request's route and the data's.
    CHECK(rb.zero_load_min_us > wb.zero_load_min_us);
}

TEST_CASE("synthetic: a light offered load is honoured and accepted (Bernoulli)") { light_load("bernoulli"); }
TEST_CASE("synthetic: a light offered load is honoured and accepted (Poisson)") { light_load("poisson"); }
TEST_CASE("synthetic: saturated, uniform traffic stays under its channel-load bound") { saturated("uniform"); }
TEST_CASE("synthetic: saturated, tornado traffic stays under its channel-load bound") { saturated("tornado"); }

TEST_CASE("synthetic: a few flows past their capacity are saturation, though the total backlog hardly grows") {
    // Hotspot offered 0.080, just under its bound (0.0806) and above what
    // it sustains (0.079, docs/validation.md): the hot node's link is full
    // and its flows back up, a fifth of the traffic; the others keep up.
    SystemSim s(kTorus + Settings{{"synthetic.pattern", "hotspot"}, {"synthetic.load", "0.080"}});
    run_clean(s);
    const SyntheticWorkload::Figures& f = workload_of(s).figures();
    INFO("backlog growth " << f.backlog_growth << ", waiting rise " << f.waiting_rise_us << " us");
    CHECK(f.backlog_growth < 0.05);   // the total alone would call it sustained
    CHECK(f.waiting_rises);
    CHECK(f.saturated);
}

TEST_CASE("synthetic: a bottleneck's swings below saturation are not saturation") {
    // Transpose on 3 x 3 x 1 QFDBs offered 0.075, 70 % of its channel-load
    // bound: the bottleneck, fed by a few flows, swings over the window, and
    // the second half's messages waited 0.19 us longer than the first's,
    // above three standard errors (the messages', and the batch means'
    // too: the swing is slower than a batch). It is below what a flow 1 %
    // past its capacity shows (0.5 us over a 100 us window), so the run is
    // sustained, as it is with a warm-up of 20 or 100 us.
    SystemSim s(Settings{{"topology.kind", "torus"},
                         {"topology.x", "3"},
                         {"topology.y", "3"},
                         {"topology.z", "1"},
                         {"workload.kind", "synthetic"},
                         {"router.link-order", "exact"},
                         {"synthetic.pattern", "transpose"},
                         {"synthetic.load", "0.075"},
                         {"synthetic.warmup", "50us"},
                         {"synthetic.measure", "100us"}});
    run_clean(s);
    const SyntheticWorkload::Figures& f = workload_of(s).figures();
    INFO("backlog growth " << f.backlog_growth << ", waiting rise " << f.waiting_rise_us << " us");
    CHECK(f.waiting_rise_us > 0.1);   // the swing is there
    CHECK_FALSE(f.waiting_rises);
    CHECK_FALSE(f.saturated);
}

TEST_CASE("synthetic: in exact time order, a hotspot past saturation drains: a delivery never waits to send its ACK") {
    // Before, the hot node's delivery waited for room in its interface's
    // queue to send an ACK, its link stopped draining, and packets to the
    // hot node filled the buffers its ACKs had to cross: a deadlock
    // (models/interconnect/README.md, *Exact time order*).
    SystemSim s(kTorus + Settings{{"router.link-order", "exact"},
                                  {"synthetic.pattern", "hotspot"},
                                  {"synthetic.load", "0.1"},
                                  {"synthetic.warmup", "50us"},
                                  {"synthetic.measure", "100us"},
                                  {"sim.time-limit", "2ms"}});
    run_clean(s);
    CHECK(workload_of(s).figures().saturated);
}

TEST_CASE("synthetic: every node's flows through the library, verified, in every job") {
    // Two processes a node: each job its own sources, on its own protection
    // domain, its packets told apart by the engines.
    SystemSim s(kTorus + Settings{{"synthetic.load", "0.02"}, {"node.processes", "2"}});
    run_clean(s);
    for (const auto& w : s.sys->workloads()) {
        const auto& sw = dynamic_cast<const SyntheticWorkload&>(*w);
        CHECK(sw.figures().measured > 0);
        CHECK(sw.figures().measured_delivered == sw.figures().measured);
        CHECK(w->log().bytes_verified.value() == w->log().bytes_delivered.value());
        CHECK(w->log().errors.value() == 0);
    }
}

TEST_CASE("synthetic: the self-checks catch a packet no message accounts for, beyond the NI links") {
    SystemSim s(kTorus + Settings{{"synthetic.load", "0.02"}});
    s.run();
    REQUIRE(s.finished());
    SyntheticWorkload& w = workload_of(s);
    CHECK(describe(check_invariants(*s.sys, s.stats, run_figures(*s.sys))).empty());
    const sc_core::sc_time mid = w.window_begin() + (w.window_end() - w.window_begin()) / 2;
    w.packet_arrived(3, 7, 0x1234, 1000000, 256, mid, mid);
    const std::string v = describe(check_invariants(*s.sys, s.stats, run_figures(*s.sys)));
    CHECK_THAT(v, Catch::Contains("synthetic-packets-matched"));
    CHECK_THAT(v, Catch::Contains("synthetic-ejection-ceiling"));
    CHECK_THAT(v, Catch::Contains("synthetic-injection-ceiling"));
}

TEST_CASE("synthetic: the self-checks catch messages faster than their zero-load sum") {
    SystemSim s(kTorus + Settings{{"synthetic.load", "0.02"}});
    // A zero-load sum of 1 ms: every message beats it.
    workload_of(s).set_network(sc_core::sc_time(6.4, sc_core::SC_NS),
                               [](unsigned, unsigned, std::uint64_t) { return sc_core::sc_time(1, sc_core::SC_MS); });
    s.run();
    REQUIRE(s.finished());
    CHECK_THAT(describe(check_invariants(*s.sys, s.stats, run_figures(*s.sys))),
               Catch::Contains("synthetic-zero-load"));
}

TEST_CASE("synthetic: the self-checks catch reads faster than their routes' zero-load sums") {
    SystemSim s(kTorus + Settings{{"synthetic.load", "0.02"}, {"workload.operation", "read"}});
    // A zero-load sum of 1 ms for every route, the request's and the data's.
    workload_of(s).set_network(sc_core::sc_time(6.4, sc_core::SC_NS),
                               [](unsigned, unsigned, std::uint64_t) { return sc_core::sc_time(1, sc_core::SC_MS); });
    s.run();
    REQUIRE(s.finished());
    const std::string v = describe(check_invariants(*s.sys, s.stats, run_figures(*s.sys)));
    CHECK_THAT(v, Catch::Contains("synthetic-zero-load"));
    CHECK_THAT(v, Catch::Contains("its request took"));
}

TEST_CASE("synthetic: settings that do not fit are refused before anything runs (exit 2)") {
    struct Bad {
        std::string args, says;
    };
    const std::string torus =
        "--topology.kind=torus --topology.x=3 --topology.y=2 --topology.z=2 --workload.kind=synthetic ";
    for (const Bad& b : std::vector<Bad>{
             {torus + "--synthetic.pattern=transpose", "as many boards along x as along y"},
             {torus + "--synthetic.load=0", "synthetic.load = 0 (from command line): must be above 0"},
             {torus + "--synthetic.load=1.5", "synthetic.load"},
             {torus + "--synthetic.pattern=hotspot --synthetic.hotspot-node=48", "the system has 48 nodes"},
             {torus + "--synthetic.hotspot-fraction=0.5", "applies to synthetic.pattern = hotspot only"},
             {torus + "--synthetic.pattern=random", "synthetic.pattern"},
             {"--workload.kind=synthetic --synthetic.pattern=tornado", "needs a dimension of 3 or more boards"},
             {"--workload.kind=synthetic --topology.kind=torus --topology.x=2 --topology.y=2 "
              "--synthetic.pattern=transpose --workload.operation=read",
              "maps node 0 to itself"},
             {torus + "--workload.two-sided=true", "has no meaning for workload.kind = synthetic"},
         }) {
        INFO(b.args);
        const auto [status, err] = run_vrdmasim("run", b.args);
        CHECK(status == 2);
        CHECK_THAT(err, Catch::Contains(b.says));
    }
    // The bounds command: the same refusals, and what it cannot bound.
    const auto [s1, e1] = run_vrdmasim("bounds", torus + "--patterns transpose");
    CHECK(s1 == 2);
    CHECK_THAT(e1, Catch::Contains("as many boards along x as along y"));
    const auto [s2, e2] = run_vrdmasim("bounds", torus + "--router.routing=adaptive --router.vcs=3");
    CHECK(s2 == 2);
    CHECK_THAT(e2, Catch::Contains("dimension-order routes"));
    const auto [s3, e3] = run_vrdmasim("bounds", torus + "--patterns uniform,spiral");
    CHECK(s3 == 2);
    CHECK_THAT(e3, Catch::Contains("no pattern 'spiral'"));
}
