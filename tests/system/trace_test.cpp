// Trace replay (workload.kind = trace, workloads/README.md "Trace replay")
// in the whole system: the project's three OTF2 test traces
// (configs/traces/, scripts/make_traces.py) replayed with every message
// and collective result verified, their compute replayed as recorded and
// scaled, under several registration strategies; and the refusals: an
// event the replay does not do (named, with its rank), more ranks than
// nodes, several processes per node, no file. Each run in a child process.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "child_process.hpp"
#include "invariants.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;

namespace {

using Figures = std::map<std::string, double>;

std::string trace(const char* name) {
    return std::string(VRDMASIM_SOURCE_DIR) + "/configs/traces/" + name + "/" + name + ".otf2";
}

Figures replay(const char* name, const Settings& extra = {}) {
    Settings s{{"topology.kind", "torus"}, {"topology.x", "2"}, {"workload.kind", "trace"},
               {"trace.file", trace(name)}, {"sim.time-limit", "1s"}};
    s.insert(s.end(), extra.begin(), extra.end());
    return in_child_figures([&s] {
        std::ostringstream os;
        SystemSim sim(s);
        sim.run();
        const TransferLog& l = sim.log();
        RunFigures f = run_figures(*sim.sys);
        f.link_util_max = 0.5;
        const auto v = check_invariants(*sim.sys, sim.stats, f);
        if (!v.empty()) std::cerr << describe(v) << "\n";
        os << "clean " << (sim.finished() && v.empty() && l.errors.value() == 0 && l.mismatches.value() == 0 &&
                           l.bytes_verified.value() == l.bytes_delivered.value() && l.bytes_verified.value() > 0)
           << "\n";
        os << "messages " << sim.counter("workload.trace.messages") << "\n";
        os << "collectives " << sim.counter("workload.trace.collectives") << "\n";
        os << "compute " << sim.scalar("workload.trace.compute_time") << "\n";
        os << "app " << sim.scalar("workload.trace.app_time") << "\n";
        return os.str();
    });
}

void clean(const Figures& f) {
    REQUIRE(f.count("clean"));
    CHECK(f.at("clean") == 1);
}

}  // namespace

TEST_CASE("trace replay: the solver, the transpose and the farm, every byte verified", "[trace]") {
    const Figures solver = replay("solver"), transpose = replay("transpose"), farm = replay("farm");
    for (const Figures* f : {&solver, &transpose, &farm}) clean(*f);
    // What the applications do (scripts/make_traces.py): 8 ranks x 10
    // iterations x 2 halos and an allreduce; 8 x 5 alltoalls; 16 tasks,
    // their results and 3 stop messages.
    CHECK(solver.at("messages") == 8 * 10 * 2);
    CHECK(solver.at("collectives") == 8 * 10);
    CHECK(transpose.at("collectives") == 8 * 5);
    CHECK(farm.at("messages") == 16 * 2 + 3);
    // The compute between the calls, as recorded: 200 us x 10 x 8 ranks ...
    CHECK(solver.at("compute") == Approx(8 * 10 * 200.0));
    CHECK(transpose.at("compute") == Approx(8 * 5 * 500.0));
    // ... and the time to solution: at least a rank's compute, plus its MPI.
    CHECK(solver.at("app") > 10 * 200.0);
    CHECK(solver.at("app") < 2 * 10 * 200.0);
}

TEST_CASE("trace replay: compute scaled, and every registration strategy", "[trace]") {
    const Figures base = replay("solver"), half = replay("solver", {{"trace.compute-scale", "0.5"}});
    clean(base);
    clean(half);
    CHECK(half.at("compute") == Approx(base.at("compute") / 2));
    CHECK(half.at("app") < base.at("app"));
    for (const char* strategy : {"pin", "pin-cache", "prefault", "netvm"}) {
        INFO(strategy);
        clean(replay("farm", {{"rdma.strategy", strategy}, {"workload.populate", "false"}}));
    }
    clean(replay("transpose", {{"rdma.buffer-guard", "mprotect"}}));
}

TEST_CASE("trace replay: what it refuses, naming why", "[trace][config]") {
    auto refusal = [](const Settings& extra, bool torus = true) {
        Settings all{{"workload.kind", "trace"}};
        if (torus) all.insert(all.end(), {{"topology.kind", "torus"}, {"topology.x", "2"}});
        all.insert(all.end(), extra.begin(), extra.end());
        return config_refusal(all);
    };
    CHECK_THAT(refusal({}), Catch::Contains("trace.file"));
    CHECK_THAT(refusal({{"trace.file", "/nonexistent.otf2"}}), Catch::Contains("cannot"));
    CHECK_THAT(refusal({{"trace.file", trace("solver")}, {"topology.kind", "qfdb"}, {"topology.nodes", "4"}}, false),
               Catch::Contains("8 ranks"));
    CHECK_THAT(refusal({{"trace.file", trace("farm")}, {"node.processes", "2"}}), Catch::Contains("node.processes"));
    // A trace with an event the replay does not do: an RMA put, written by
    // the OTF2 writer here.
    const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/vrdmasim-trace-test-" +
                            std::to_string(::getpid());
    const std::string script =
        "import otf2\n"
        "from otf2.enums import *\n"
        "with otf2.writer.open('" + dir + "', timer_resolution=1000000000) as t:\n"
        "    d = t.definitions\n"
        "    n = d.system_tree_node('m')\n"
        "    locs = [d.location('L', type=LocationType.CPU_THREAD, group=d.location_group('R%d' % r, "
        "system_tree_parent=n)) for r in range(2)]\n"
        "    d.group('MPI', group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=tuple(locs))\n"
        "    g = d.group('W', group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=tuple(locs))\n"
        "    c = d.comm('MPI_COMM_WORLD', g)\n"
        "    w = d.rma_win('win', c)\n"
        "    e = t.event_writer_from_location(locs[1])\n"
        "    e.rma_put(5000, w, 0, 64, 1)\n"
        "    t.event_writer_from_location(locs[0]).mpi_send(100, 1, c, 0, 8)\n";
    REQUIRE(std::system(("/usr/bin/python3 -c \"" + script + "\"").c_str()) == 0);
    const std::string msg = refusal({{"trace.file", dir + "/traces.otf2"}});
    CHECK_THAT(msg, Catch::Contains("event RmaPut (rank 1 at tick 5000)"));
    std::system(("rm -rf '" + dir + "'").c_str());
}
