// The whole system as `vrdmasim run` builds it: nodes, links, workloads, and
// the data check that every run relies on.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/sim/system.hpp"
#include "src/sim/thread_budget.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

using Sim = SystemSim;

}   // namespace

TEST_CASE("stream: every byte arrives and is verified, at close to the link's rate", "[system]") {
    Sim s({{"workload.total-bytes", "4MiB"}, {"workload.message-size", "256KiB"}, {"workload.window", "4"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().transfers.value() == 16);
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().bytes_delivered.value() == 4u << 20);
    CHECK(s.log().bytes_verified.value() == 4u << 20);
    CHECK(s.log().mismatches.value() == 0);
    // 256 B payload in 18 flits on a 16 Gb/s link: at most 14.2 Gb/s of payload.
    // The NI's buffer holds two packets (40 flits, as the ExaNet switch's
    // input FIFO), which hides only part of the gaps between blocks: 12.5 Gb/s.
    const double secs = (s.log().last_done - s.log().first_post).to_seconds();
    const double gbps = (4u << 20) * 8.0 / secs / 1e9;
    CHECK(gbps < 16.0 * 256 / 288 + 1e-9);
    CHECK(gbps > 12.0);
}

TEST_CASE("stream: a slower link sets the throughput", "[system]") {
    Sim s({{"workload.total-bytes", "2MiB"}, {"link.rate", "4Gbps"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    const double gbps = (2u << 20) * 8.0 / (s.log().last_done - s.log().first_post).to_seconds() / 1e9;
    CHECK(gbps == Approx(4.0 * 256 / 288).epsilon(0.05));
    CHECK(s.log().bytes_verified.value() == 2u << 20);
}

TEST_CASE("stream: data corrupted in flight is caught as a mismatch, never passed", "[system]") {
    Sim s({{"workload.total-bytes", "2MiB"}, {"workload.message-size", "64KiB"}, {"workload.window", "2"}});
    // Flip source bytes after the workload filled them but before the engine
    // read them (every 7 us for a while, so some land in that gap): the
    // destination then differs from what was meant to be sent.
    At saboteur("saboteur", sc_time(100, SC_US), [&] {
        RdmaProcess& a = s.sys->node(0).app;
        std::vector<unsigned char> junk(2 * 64 * 1024, 0x5a);
        REQUIRE(!a.allocations().empty());
        for (int i = 0; i < 40; ++i) {
            REQUIRE(a.debug_write(a.allocations()[0].first, junk.data(), junk.size()));
            wait(7, SC_US);
        }
    });
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().mismatches.value() >= 1);
    CHECK(s.log().bytes_verified.value() < 2u << 20);
    CHECK(s.log().bytes_verified.value() + s.log().mismatches.value() * 64 * 1024 == 2u << 20);
}

TEST_CASE("pingpong: one-way latency is reproducible and of the right size", "[system]") {
    Sim s({{"workload.kind", "pingpong"}, {"workload.message-size", "64B"}, {"workload.iterations", "20"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().transfers.value() == 40);
    CHECK(s.log().bytes_verified.value() == 40 * 64);
    const Histogram& lat = s.log().latency_us;
    CHECK(lat.count() == 20);
    // Every round trip is alike on an idle system once the SMMU's TLBs are
    // warm (the first pays its page-table walks: a few hundred ns).
    CHECK(lat.quantile(0.5) - lat.min() < 0.01);
    CHECK(lat.max() - lat.min() < 1.0);
    // One hop, user to user: about a microsecond (docs/references.md: 1.3 us on
    // the prototype; calibration comes with the interconnect model).
    CHECK(lat.mean() > 0.5);
    CHECK(lat.mean() < 3.0);
}

TEST_CASE("pingpong latency grows by the added link latency", "[system]") {
    Sim s({{"workload.kind", "pingpong"},
           {"workload.message-size", "64B"},
           {"workload.iterations", "5"},
           {"link.latency", "1227ns"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    // Default link latency is 227 ns: +1 us per hop; one-way counts one hop
    // for the data and the ack is off the critical path.
    const double one_way = s.log().latency_us.mean();
    CHECK(one_way > 2.0);
    CHECK(one_way < 4.0);
}

TEST_CASE("four nodes of a QFDB: any pair can stream", "[system]") {
    Sim s({{"topology.nodes", "4"},
           {"workload.src-node", "3"},
           {"workload.dst-node", "1"},
           {"workload.total-bytes", "1MiB"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().bytes_verified.value() == 1u << 20);
    CHECK(s.stats.find_counter("node3_to_node1.packets")->value() == 4096);
    CHECK(s.stats.find_counter("node0_to_node1.packets")->value() == 0);
}

TEST_CASE("configurations the system cannot be built with are config errors", "[system]") {
    ParamRegistry reg;
    declare_all_params(reg);
    Config cfg(reg);
    cfg.set("workload.dst-node", "3", "command line");
    StatRegistry stats;
    Tracer tracer;
    SimContext ctx{cfg, stats, tracer};
    try {
        System sys(ctx);
        FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        const std::string msg = e.what();
        CHECK(msg.find("workload.dst-node") != std::string::npos);
        CHECK(msg.find("command line") != std::string::npos);
        CHECK(msg.find("2 nodes") != std::string::npos);
    }
}

TEST_CASE("buffers that do not fit in memory are a config error", "[system]") {
    ParamRegistry reg;
    declare_all_params(reg);
    Config cfg(reg);
    cfg.set("workload.message-size", "1GiB", "command line");
    cfg.set("workload.total-bytes", "64GiB", "command line");
    cfg.set("workload.window", "64", "command line");   // 64 GiB of buffers per side
    StatRegistry stats;
    Tracer tracer;
    SimContext ctx{cfg, stats, tracer};
    CHECK_THROWS_AS(System(ctx), ConfigError);
}

TEST_CASE("smmu: transfers run on the processes' own page tables through the SMMU", "[system][smmu]") {
    Sim s({{"workload.total-bytes", "1MiB"}, {"workload.message-size", "64KiB"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().bytes_verified.value() == 1u << 20);
    CHECK(s.log().errors.value() == 0);
    // Buffers are mmap()ed virtual memory of each node's process.
    RdmaProcess& a = s.sys->node(0).app;
    REQUIRE(a.is_virtual());
    REQUIRE(!a.allocations().empty());
    CHECK(a.allocations()[0].first >= 0x100000000000ull);   // a user address, far from any physical one
    CHECK(s.stats.sum_counters("tcu.walks") > 0);
    CHECK(s.stats.sum_counters("translated") > 4096);   // every packet write and block read
    CHECK(s.stats.sum_counters("faults_translation") == 0);   // populated buffers: nothing faults
}

TEST_CASE("smmu: a 2 MiB transparent huge page walks once where 4 KiB pages walk per page", "[system][smmu]") {
    // One 2 MiB source buffer (two 1 MiB slots): a block with THP, 512 pages without.
    Sim thp({{"workload.total-bytes", "2MiB"},
             {"workload.message-size", "1MiB"},
             {"workload.window", "2"},
             {"vm.thp", "always"}});
    thp.run();
    REQUIRE(thp.sys->workload().finished());
    CHECK(thp.log().bytes_verified.value() == 2u << 20);
    const std::uint64_t walks = thp.stats.find_counter("node0.smmu.tcu.walks")->value();
    CHECK(walks <= 4);   // the source block, the records page, a few neighbours
    CHECK(thp.stats.find_counter("node0.vm.faults_huge")->value() >= 1);
}

TEST_CASE("smmu: without THP the same buffer walks once per 4 KiB page", "[system][smmu]") {
    Sim s({{"workload.total-bytes", "2MiB"},
           {"workload.message-size", "1MiB"},
           {"workload.window", "2"},
           {"vm.thp", "never"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().bytes_verified.value() == 2u << 20);
    CHECK(s.stats.find_counter("node0.smmu.tcu.walks")->value() >= 512);
}

TEST_CASE("smmu: without it, addresses are physical and nothing is translated", "[system][smmu]") {
    Sim s({{"workload.total-bytes", "1MiB"}, {"smmu.enabled", "false"}});
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().bytes_verified.value() == 1u << 20);
    CHECK(s.stats.find_counter("node0.smmu.transactions") == nullptr);
    CHECK_FALSE(s.sys->node(0).app.is_virtual());
}

TEST_CASE("smmu: an unmapped source page faults and the transfer fails loudly, never silently", "[system][smmu]") {
    // The original engine: a fault fails the transfer at once.
    Sim s({{"workload.total-bytes", "256KiB"},
           {"workload.message-size", "64KiB"},
           {"workload.window", "1"},
           {"vm.thp", "never"},
           {"dma.fault-tolerant", "false"}});
    // Once the buffers are mapped, take the second page of node 0's source out.
    At saboteur("saboteur", sc_time(50, SC_US), [&] {
        RdmaProcess& a = s.sys->node(0).app;
        REQUIRE(!a.allocations().empty());
        const VmResult r = s.sys->node(0).vm.munmap(a.pid(), a.allocations()[0].first + 4096, 4096, sc_time_stamp());
        REQUIRE(r.ok());
    });
    s.run();
    REQUIRE(s.sys->workload().finished());
    // The transfers after the unmap read that page: they fail, none is passed as good.
    CHECK(s.log().errors.value() >= 1);
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.log().bytes_delivered.value() + s.log().errors.value() * 64 * 1024 == 256 * 1024);
    CHECK(s.stats.find_counter("node0.smmu.cb0.faults_translation")->value() >= 1);
    CHECK(s.stats.find_counter("node0.smmu.cb0.faults_read")->value() >= 1);
    CHECK(s.stats.find_counter("node0.dma.smmu_faults")->value() >= 1);
}

TEST_CASE("smmu: a read-only destination page fails the transfer at the receiver", "[system][smmu]") {
    Sim s({{"workload.total-bytes", "256KiB"},
           {"workload.message-size", "64KiB"},
           {"workload.window", "1"},
           {"vm.thp", "never"},
           {"dma.fault-tolerant", "false"}});
    At saboteur("saboteur", sc_time(50, SC_US), [&] {
        RdmaProcess& b = s.sys->node(1).app;
        REQUIRE(!b.allocations().empty());
        const VmResult r =
            s.sys->node(1).vm.mprotect(b.pid(), b.allocations()[0].first + 8 * 4096, 4096, Prot::Read, sc_time_stamp());
        REQUIRE(r.ok());
    });
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().errors.value() >= 1);
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.stats.find_counter("node1.smmu.cb0.faults_permission")->value() >= 1);
    CHECK(s.stats.find_counter("node1.smmu.cb0.faults_write")->value() >= 1);
    CHECK(s.stats.find_counter("node1.dma.rx_errors")->value() >= 1);
}

TEST_CASE("torus: a stream across a 3x2x1 torus delivers every byte along its dimension-order route",
          "[system][topology]") {
    // x0y0z0f0 -> x2y1z0f3: to F1, y+ , x- over the wrap link, to f3.
    Sim s({{"topology.kind", "torus"},
           {"topology.x", "3"},
           {"topology.y", "2"},
           {"workload.src-node", "0"},
           {"workload.dst-node", "23"},
           {"workload.total-bytes", "1MiB"},
           {"workload.message-size", "64KiB"}});
    REQUIRE(s.sys->size() == 24);
    CHECK(s.sys->coord_name(0) == "x0y0z0f0");
    CHECK(s.sys->coord_name(23) == "x2y1z0f3");
    CHECK(s.sys->coord(23) == (3u | 2u << 2 | 1u << 8));
    CHECK(s.sys->hops(0, 23) == 4);
    CHECK(s.sys->hops(23, 0) == 4);
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().bytes_verified.value() == 1u << 20);
    CHECK(s.log().mismatches.value() == 0);
    // Every data packet took the route (256 B packets), on the VC the dateline says.
    for (const char* l :
         {"x0y0z0f0_to_x0y0z0f1", "x0y0z0f1_to_x0y1z0f1", "x0y1z0f1_to_x2y1z0f1", "x2y1z0f1_to_x2y1z0f3"})
        CHECK(s.stats.find_counter(std::string(l) + ".packets")->value() >= 4096);
    CHECK(s.stats.find_counter("x0y0z0f0_to_x0y0z0f3.packets")->value() == 0);
    CHECK(s.stats.find_scalar("x0y1z0f1_to_x2y1z0f1.vc1.buffer_hwm")->value() > 0);
    CHECK(s.stats.find_scalar("x0y1z0f1_to_x2y1z0f1.vc0.buffer_hwm")->value() == 0);
    // Statistics keep their suffixes under the node's coordinate name.
    CHECK(s.stats.find_counter("x0y0z0f0.dma.packets_sent") != nullptr);
    CHECK(s.stats.sum_counters("buffer_overflows") == 0);
}

TEST_CASE("mezzanine: 16 MPSoCs on a ring of 4 QFDBs, a stream crosses two 2-lane edges", "[system][topology]") {
    Sim s({{"topology.kind", "mezzanine"},
           {"workload.src-node", "5"},
           {"workload.dst-node", "10"},
           {"workload.total-bytes", "1MiB"},
           {"workload.message-size", "64KiB"}});
    REQUIRE(s.sys->size() == 16);
    CHECK(s.sys->coord_name(5) == "x1y0z0f1");
    CHECK(s.sys->coord_name(10) == "x2y0z0f2");
    CHECK(s.sys->hops(5, 10) == 2);
    CHECK(s.sys->hops(4, 12) == 4);   // f0 -> F1, x1 -> x3 (a tie: + twice), F1 -> f0
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().bytes_verified.value() == 1u << 20);
    CHECK(s.stats.find_counter("x1y0z0f1_to_x2y0z0f1.packets")->value() >= 4096);
    // 2 lanes x 16 Gb/s: the intra-board hop (16 Gb/s) limits the stream.
    const double gbps = (1u << 20) * 8.0 / (s.log().last_done - s.log().first_post).to_seconds() / 1e9;
    CHECK(gbps > 10.0);
}

TEST_CASE("torus: 1,296 MPSoCs (9x6x6 QFDBs) are built, named and routed", "[system][topology]") {
    Sim s({{"topology.kind", "torus"},
           {"topology.x", "9"},
           {"topology.y", "6"},
           {"topology.z", "6"},
           {"workload.src-node", "0"},
           {"workload.dst-node", "1295"},
           {"workload.total-bytes", "64KiB"},
           {"workload.message-size", "64KiB"},
           {"workload.window", "1"},
           {"dram.size", "1GiB"}});
    REQUIRE(s.sys->size() == 1296);
    CHECK(s.sys->coord_name(1295) == "x8y5z5f3");
    CHECK(s.sys->node(1295).group == "x8y5z5f3");
    // f0 -> F1, z 0 -> 5 (1 back), y 0 -> 5 (1 back), x 0 -> 8 (1 back), -> f3.
    CHECK(s.sys->hops(0, 1295) == 5);
    s.run();
    REQUIRE(s.sys->workload().finished());
    CHECK(s.log().bytes_verified.value() == 64u << 10);
}

namespace {
// The names of the SC_THREADs alive under `o`, itself included, sorted.
void live_threads(const sc_object& o, std::vector<std::string>& out) {
    if (std::string(o.kind()) == "sc_thread_process") out.push_back(o.name());
    for (const sc_object* c : o.get_child_objects()) live_threads(*c, out);
}
std::vector<std::string> live_threads(const sc_object& o) {
    std::vector<std::string> out;
    live_threads(o, out);
    std::sort(out.begin(), out.end());
    return out;
}
// A cold stream of 256 KiB from node 0 to node 1 of a torus of two QFDBs,
// its faults in `fault_mode`, and any `more` settings.
Settings cold_pair(const std::string& fault_mode, const Settings& more = {}) {
    const Settings s{{"topology.kind", "torus"},         {"topology.x", "2"},
                     {"workload.src-node", "0"},         {"workload.dst-node", "1"},
                     {"workload.total-bytes", "256KiB"}, {"workload.message-size", "64KiB"},
                     {"workload.populate", "false"},     {"smmu-driver.fault-mode", fault_mode}};
    return s + more;
}
}   // namespace

TEST_CASE("thread stacks: an idle node has two threads, a fault-tolerant node at most eight", "[system][topology]") {
    // Each thread costs a stack's touched pages and its objects, counted by
    // the thread budget (src/sim/thread_budget.hpp): the kernel daemons, the boot, the SMMU
    // driver's RESUME are methods, and the engine's threads, the SMMU
    // interrupt handler's, are spawned when they first have work.
    Sim s(cold_pair("terminate", {{"dma.fault-tolerant", "true"}}));
    REQUIRE(s.sys->size() == 8);
    for (std::size_t i = 0; i < s.sys->size(); ++i) {
        INFO("node " << i);
        // The application's and the fault-tolerant engine's watchdog.
        CHECK(live_threads(s.sys->node(i)).size() == 2);
        // Those, the engine, control, atomic and record threads, the
        // interrupt handler and the network interface's delivery thread
        // (its one receive buffer's: exact time order, the default), once
        // each has had work.
        CHECK(thread_processes_under(s.sys->node(i)) == 8);
    }
    s.run();
    s.check_all_verified(4, 256u << 10);
    // What each node has now (the applications' threads, done, wait on
    // nothing rather than end: library/rdma/process.cpp): the sender's
    // engine; the receiver's control thread (its ACKs) and interrupt handler
    // (its destination pages faulted); an idle node nothing it did not have
    // at the start. No delivery thread: in terminate mode the engine's
    // receive cannot wait, so the link delivers from its hop queue's method
    // (models/interconnect/README.md, *Deliveries*).
    CHECK(s.smmu_faults(s.sys->coord_name(1)) > 0);
    using Names = std::vector<std::string>;
    CHECK(live_threads(s.sys->node(0)) ==
          Names{"x0y0z0f0.app.run", "x0y0z0f0.dma.engine.run", "x0y0z0f0.dma.watchdog_thread"});
    CHECK(live_threads(s.sys->node(1)) == Names{"x0y0z0f1.app.run", "x0y0z0f1.dma.control_thread.run",
                                                "x0y0z0f1.dma.watchdog_thread", "x0y0z0f1.smmu_driver.irq_thread.run"});
    CHECK(live_threads(s.sys->node(5)) == Names{"x1y0z0f1.app.run", "x1y0z0f1.dma.watchdog_thread"});
    // The budget still counts a thread for each lazy one not spawned, and
    // once for each spawned (its thread, no longer its owner's attribute):
    // the application's, the watchdog and the six lazy threads, whatever
    // each node did.
    for (std::size_t i = 0; i < s.sys->size(); ++i) {
        INFO("node " << i);
        CHECK(thread_processes_under(s.sys->node(i)) == 8);
    }
}

TEST_CASE("thread stacks: a delivery thread is spawned only where the receive may wait", "[system][topology]") {
    // In stall mode a faulted write waits in the SMMU for RESUME, so the
    // receiver's interface delivers from its thread (whatever sends while it
    // waits queues behind it), and the run is the same as ever.
    Sim s(cold_pair("stall"));
    s.run();
    s.check_all_verified(4, 256u << 10);
    CHECK(s.smmu_faults(s.sys->coord_name(1)) > 0);
    const auto names = live_threads(s.sys->node(1));
    CHECK(std::count(names.begin(), names.end(), "x0y0z0f1.eject.deliver0.run") == 1);
}
TEST_CASE("topology keys that do not fit the kind are config errors naming the key", "[system][topology]") {
    const std::vector<std::pair<Settings, std::string>> cases{
        {{{"topology.kind", "torus"}, {"topology.nodes", "4"}}, "topology.nodes"},
        {{{"topology.kind", "mezzanine"}, {"topology.nodes", "3"}}, "topology.nodes"},
        {{{"topology.x", "3"}}, "topology.x"},
        {{{"topology.kind", "mezzanine"}, {"topology.z", "2"}}, "topology.z"},
        {{{"topology.kind", "torus"}, {"topology.x", "3"}, {"router.vcs", "1"}}, "router.vcs"},
        {{{"topology.kind", "torus"}, {"topology.x", "3"}, {"router.routing", "adaptive"}, {"router.vcs", "2"}},
         "router.vcs"},
        {{{"topology.kind", "torus"}, {"topology.x", "2"}, {"router.routing", "adaptive"}, {"router.vcs", "2"}},
         "router.vcs"},
        {{{"router.routing", "adaptive"}, {"router.vcs", "3"}}, "router.routing"},
        {{{"topology.kind", "mezzanine"}, {"router.routing", "adaptive"}, {"router.vcs", "3"}}, "router.routing"},
        {{{"topology.kind", "torus"}, {"router.routing", "adaptive"}, {"router.vcs", "3"}}, "router.routing"},
        {{{"topology.kind", "torus"}, {"topology.x", "2"}, {"workload.dst-node", "8"}}, "workload.dst-node"},
    };
    for (const auto& c : cases) {
        INFO(c.second);
        ParamRegistry reg;
        declare_all_params(reg);
        Config cfg(reg);
        for (const auto& kv : c.first) cfg.set(kv.first, kv.second, "command line");
        StatRegistry stats;
        Tracer tracer;
        SimContext ctx{cfg, stats, tracer};
        try {
            System sys(ctx);
            FAIL("expected a ConfigError");
        } catch (const ConfigError& e) {
            CHECK(std::string(e.what()).find(c.second) != std::string::npos);
            CHECK(std::string(e.what()).find("command line") != std::string::npos);
        }
    }
    // A torus with a dimension of 0 is refused by the parameter's range.
    ParamRegistry reg;
    declare_all_params(reg);
    Config cfg(reg);
    CHECK_THROWS_AS(cfg.set("topology.x", "0", "command line"), ConfigError);
}
