// Trace replay (workload.kind = trace, workloads/README.md "Trace replay")
// in the whole system: the project's three OTF2 test traces
// (configs/traces/, scripts/make_traces.py) replayed with every message
// and collective result verified, their compute replayed as recorded and
// scaled, under several registration strategies, the collectives on
// one-sided RDMA and by each algorithm, ranks mapped linearly, round robin
// and by a file, a copy of the application per process; and the refusals:
// an event the replay does not do (named, with its rank), more ranks than
// nodes, two ranks on a node, a bad mapping file, no file, an anchor file
// with a count it cannot hold (refused before OTF2 allocates for it). Each
// run in a child process.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include <sys/wait.h>

#include "child_process.hpp"
#include "situation_run.hpp"
#include "src/sim/invariants.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;

namespace {

using Figures = std::map<std::string, double>;

std::string trace(const char* name) {
    return std::string(VRDMASIM_SOURCE_DIR) + "/configs/traces/" + name + "/" + name + ".otf2";
}

// Every job announced the payload it delivered (Workload::planned_bytes,
// which `run --check` prints), and knew it.
bool announced_all(SystemSim& sim) {
    bool ok = true;
    for (const auto& w : sim.sys->workloads()) {
        const auto delivered = static_cast<std::int64_t>(w->log().bytes_delivered.value());
        if (w->planned_bytes() == delivered) continue;
        std::cerr << "job " << w->job() << " announced " << w->planned_bytes() << " B, delivered " << delivered
                  << " B\n";
        ok = false;
    }
    return ok;
}

Figures replay(const char* name, const Settings& extra = {}) {
    Settings s{{"topology.kind", "torus"},
               {"topology.x", "2"},
               {"workload.kind", "trace"},
               {"trace.file", trace(name)},
               {"sim.time-limit", "1s"}};
    s.insert(s.end(), extra.begin(), extra.end());
    return in_child_figures([&s] {
        std::ostringstream os;
        SystemSim sim(s);
        sim.run();
        const TransferLog& l = sim.log();
        const auto v = sim.self_check();
        if (!v.empty()) std::cerr << describe(v) << "\n";
        os << "clean "
           << (sim.finished() && v.empty() && l.errors.value() == 0 && l.mismatches.value() == 0 &&
               l.bytes_verified.value() == l.bytes_delivered.value() && l.bytes_verified.value() > 0 &&
               announced_all(sim))
           << "\n";
        os << "planned " << sim.sys->workloads().at(0)->planned_bytes() << "\n";
        os << "messages " << sim.counter("workload.trace.messages") << "\n";
        os << "collectives " << sim.counter("workload.trace.collectives") << "\n";
        os << "compute " << sim.scalar("workload.trace.compute_time") << "\n";
        os << "app " << sim.scalar("workload.trace.app_time") << "\n";
        os << "coll_messages "
           << sim.stats.sum_counters("msg.eager_sends") + sim.stats.sum_counters("msg.rendezvous_sends") << "\n";
        if (const Scalar* j1 = sim.stats.find_scalar("job1.workload.trace.app_time"))
            os << "app1 " << j1->value() << "\n";
        if (const Counter* v1 = sim.stats.find_counter("job1.workload.bytes_verified"))
            os << "verified1 " << v1->value() << "\n";
        os << "verified " << l.bytes_verified.value() << "\n";

        return os.str();
    });
}

// The start of a Python script that writes, with the OTF2 writer, an
// archive at `dir` of `ranks` MPI ranks (locations `locs`) on
// MPI_COMM_WORLD (`c`); the caller adds its events, with `t`, `d`, `c` and
// `locs` in scope, indented by four spaces.
std::string otf2_header(const std::string& dir, unsigned ranks) {
    return "import otf2\n"
           "from otf2.enums import *\n"
           "with otf2.writer.open('" +
           dir +
           "', timer_resolution=1000000000) as t:\n"
           "    d = t.definitions\n"
           "    n = d.system_tree_node('m')\n"
           "    locs = [d.location('L', type=LocationType.CPU_THREAD, group=d.location_group('R%d' % r, "
           "system_tree_parent=n)) for r in range(" +
           std::to_string(ranks) +
           ")]\n"
           "    d.group('MPI', group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=tuple(locs))\n"
           "    g = d.group('W', group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=tuple(locs))\n"
           "    c = d.comm('MPI_COMM_WORLD', g)\n";
}

void clean(const Figures& f) {
    REQUIRE(f.count("clean"));
    CHECK(f.at("clean") == 1);
}

}   // namespace

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
    // The payload announced before the run (and delivered: clean), from the
    // trace alone: every received message and every rank's result of every
    // collective (an alltoall's holds each rank's 4 KiB block, its own
    // included); the farm's 16 results of 4 KiB at rank 0, 16 tasks of 1 KiB
    // and 3 empty stop messages at the workers.
    CHECK(solver.at("planned") == 8 * 10 * (2 * 8192 + 8));
    CHECK(transpose.at("planned") == 8 * 5 * 8 * 4096);
    CHECK(farm.at("planned") == 16 * 4096 + 16 * 1024);
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

TEST_CASE("trace replay: collectives one-sided and by each algorithm, ranks mapped, a copy per process", "[trace]") {
    const Figures base = replay("solver");
    clean(base);
    // The allreduces on one-sided RDMA: only the halo messages go through
    // the two-sided library.
    const Figures one = replay("solver", {{"collective.transport", "one-sided"}});
    clean(one);
    CHECK(one.at("coll_messages") == 8 * 10 * 2);
    CHECK(base.at("coll_messages") > 8 * 10 * 2);
    // The algorithm parameters reach the trace's collectives: the ring
    // sends 2 (n - 1) messages a rank where recursive doubling sends 3.
    const Figures ring = replay("solver", {{"collective.allreduce-algorithm", "ring"}});
    clean(ring);
    CHECK(ring.at("coll_messages") - 8 * 10 * 2 == 10 * 8 * 2 * 7);
    CHECK(base.at("coll_messages") - 8 * 10 * 2 == 10 * 8 * 3);
    const Figures rab = replay("transpose", {{"collective.alltoall-algorithm", "bruck"}});
    clean(rab);
    // Round robin across the two QFDBs: neighbours in rank order on other
    // boards, so the halo crosses the board link and takes longer.
    const Figures rr = replay("solver", {{"trace.mapping", "round-robin"}});
    clean(rr);
    CHECK(rr.at("app") > base.at("app"));
    // A mapping file: the ranks in reverse.
    const std::string map = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                            "/vrdmasim-trace-map-" + std::to_string(::getpid());
    {
        std::ofstream out(map);
        out << "# rank 0 on node 7, ...\n";
        for (int n = 7; n >= 0; --n) out << n << "\n";
    }
    const Figures rev = replay("solver", {{"trace.mapping", "file"}, {"trace.mapping-file", map}});
    clean(rev);
    CHECK(rev.at("messages") == base.at("messages"));
    std::remove(map.c_str());
    // Two processes a node: each job replays its own copy, every byte of
    // each verified.
    const Figures two = replay("farm", {{"node.processes", "2"}});
    clean(two);
    REQUIRE(two.count("app1"));
    CHECK(two.at("verified1") == two.at("verified"));
    CHECK(two.at("app1") > 0);
}

// The fault situations of strategy_test.cpp (tests/fault_situations.hpp)
// on every node while the solver and the transpose replay (cold, swap),
// and a transpose of larger blocks (THP collapse needs whole 2 MiB
// buffers: 256 KiB blocks; migration, buffers that run over from the
// compactor's filler block: 64 KiB), in both SMMU fault modes, the
// collectives on both transports: every message and result verified, and
// the situation happened.
TEST_CASE("trace replay in the fault situations: cold, swap, THP collapse, migration, stall and terminate",
          "[trace][strategy]") {
    using situations::Situation;
    const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                            "/vrdmasim-trace-situations-" + std::to_string(::getpid());
    auto transpose_of = [&](const std::string& block) {
        const std::string out = dir + "/" + block;
        REQUIRE(std::system(("/usr/bin/python3 " + std::string(VRDMASIM_SOURCE_DIR) +
                             "/scripts/make_traces.py --only transpose --block " + block + " --out '" + out +
                             "' > /dev/null")
                                .c_str()) == 0);
        return out + "/transpose/transpose.otf2";
    };
    const std::string huge = transpose_of("262144"), migrating = transpose_of("65536");
    for (const char* app : {"solver", "transpose"})
        for (Situation sit : {Situation::Cold, Situation::Swap, Situation::Thp, Situation::Migrate})
            for (const char* mode : {"stall", "terminate"})
                for (const char* transport : {"two-sided", "one-sided"}) {
                    if ((sit == Situation::Thp || sit == Situation::Migrate) && std::string(app) == "solver") continue;
                    const std::string file = sit == Situation::Thp       ? huge
                                             : sit == Situation::Migrate ? migrating
                                                                         : trace(app);
                    INFO(file << ", " << situations::name(sit) << ", " << mode << ", " << transport);
                    const Settings set{{"topology.kind", "torus"},
                                       {"topology.x", "2"},
                                       {"workload.kind", "trace"},
                                       {"trace.file", file},
                                       {"collective.transport", transport},
                                       {"smmu-driver.fault-mode", mode},
                                       {"dma.fault-tolerant", std::string(mode) == "terminate" ? "true" : "false"},
                                       {"sim.time-limit", "2s"}};
                    situations::check_clean_run(situations::run_in(set, sit, {0, 1, 2, 3, 4, 5, 6, 7},
                                                                   [](const TransferLog& l) {
                                                                       return l.bytes_verified.value() ==
                                                                                  l.bytes_delivered.value() &&
                                                                              l.bytes_verified.value() > 0;
                                                                   }),
                                                sit);
                }
    std::system(("rm -rf '" + dir + "'").c_str());
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
    const std::string map = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                            "/vrdmasim-test-badmap-" + std::to_string(::getpid());   // (not a rank's spool's name)
    auto with_map = [&](const std::string& text) {
        std::ofstream(map) << text;
        return refusal({{"trace.file", trace("farm")}, {"trace.mapping", "file"}, {"trace.mapping-file", map}});
    };
    CHECK_THAT(with_map("0\n1\n1\n2\n"), Catch::Contains("places ranks 1 and 2 on node 1") &&
                                             Catch::Contains("could not receive from the network"));
    CHECK_THAT(with_map("0\n1\n"), Catch::Contains("places 2 ranks, the trace has 4"));
    CHECK_THAT(with_map("0\n1\nnode3\n2\n"), Catch::Contains(":3: 'node3' is not a node index"));
    CHECK_THAT(with_map("0\n1\n8\n2\n"), Catch::Contains("node 8 of 8"));
    // A byte-order mark (an editor's UTF-8) is read past, as in configs;
    // a stray invisible character is named, not echoed invisibly.
    CHECK(with_map("\xEF\xBB\xBF"
                   "0\n1\n2\n3\n")
              .empty());
    CHECK_THAT(with_map("0\n1\xC2\xA0\n2\n3\n"), Catch::Contains("'1<U+00A0 no-break space>' is not a node index"));
    std::remove(map.c_str());
    CHECK_THAT(refusal({{"trace.file", trace("farm")}, {"trace.mapping", "file"}}),
               Catch::Contains("needs a mapping file"));
    CHECK_THAT(refusal({{"trace.file", trace("farm")}, {"trace.mapping-file", "x"}}),
               Catch::Contains("but trace.mapping = linear"));
    CHECK_THAT(refusal({{"trace.file", trace("farm")}, {"workload.operation", "read"}}),
               Catch::Contains("point-to-point calls are two-sided"));
    // An allgather among 3 ranks cannot go by recursive doubling (whole
    // halves): refused before the run, naming the parameter and the trace.
    const std::string dir3 = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                             "/vrdmasim-trace-allgather-" + std::to_string(::getpid());
    const std::string gather = otf2_header(dir3, 3) +
                               "    for l in locs:\n"
                               "        e = t.event_writer_from_location(l)\n"
                               "        e.mpi_collective_begin(100)\n"
                               "        e.mpi_collective_end(200, CollectiveOp.ALLGATHER, c, 0, 64, 192)\n";
    REQUIRE(std::system(("/usr/bin/python3 -c \"" + gather + "\"").c_str()) == 0);
    CHECK_THAT(
        refusal({{"trace.file", dir3 + "/traces.otf2"}, {"collective.allgather-algorithm", "recursive-doubling"}}),
        Catch::Contains("collective.allgather-algorithm") && Catch::Contains("power-of-two") &&
            Catch::Contains("calls allgather"));
    std::system(("rm -rf '" + dir3 + "'").c_str());
    // A trace with an event the replay does not do: an RMA put, written by
    // the OTF2 writer here.
    const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                            "/vrdmasim-trace-test-" + std::to_string(::getpid());
    const std::string script = otf2_header(dir, 2) +
                               "    w = d.rma_win('win', c)\n"
                               "    e = t.event_writer_from_location(locs[1])\n"
                               "    e.rma_put(5000, w, 0, 64, 1)\n"
                               "    t.event_writer_from_location(locs[0]).mpi_send(100, 1, c, 0, 8)\n";
    REQUIRE(std::system(("/usr/bin/python3 -c \"" + script + "\"").c_str()) == 0);
    const std::string msg = refusal({{"trace.file", dir + "/traces.otf2"}});
    CHECK_THAT(msg, Catch::Contains("event RmaPut (rank 1 at tick 5000)"));
    std::system(("rm -rf '" + dir + "'").c_str());
    // An event the replay does with an attribute it would not honour.
    const std::string attributed =
        otf2_header(dir, 2) +
        "    a = d.attribute('buffer_address', 'the send buffer', Type.UINT64)\n"
        "    t.event_writer_from_location(locs[0]).mpi_send(100, 1, c, 0, 8, attributes={a: 4096})\n"
        "    t.event_writer_from_location(locs[1]).mpi_recv(200, 0, c, 0, 8)\n";
    REQUIRE(std::system(("/usr/bin/python3 -c \"" + attributed + "\"").c_str()) == 0);
    CHECK_THAT(refusal({{"trace.file", dir + "/traces.otf2"}}),
               Catch::Contains("MpiSend with attribute 'buffer_address' (rank 0 at tick 100)"));
    std::system(("rm -rf '" + dir + "'").c_str());
    // A bcast whose root is not a rank of the communicator, or that has no
    // root: refused, naming the rank and the tick (not replayed as root 0).
    for (const char* root : {"17", "OTF2_UNDEFINED_UINT32"}) {
        const std::string rooted = otf2_header(dir, 4) +
                                   "    for l in locs:\n"
                                   "        e = t.event_writer_from_location(l)\n"
                                   "        e.mpi_collective_begin(100)\n"
                                   "        e.mpi_collective_end(200, CollectiveOp.BCAST, c, " +
                                   std::string(root == std::string("17") ? "17" : "0xFFFFFFFF") + ", 64, 64)\n";
        REQUIRE(std::system(("/usr/bin/python3 -c \"" + rooted + "\"").c_str()) == 0);
        CHECK_THAT(
            refusal({{"trace.file", dir + "/traces.otf2"}, {"topology.kind", "qfdb"}, {"topology.nodes", "4"}}, false),
            Catch::Contains(root == std::string("17") ? "MPI bcast with root rank 17 (rank 0 at tick 200)"
                                                      : "MPI bcast with no root (rank 0 at tick 200)") &&
                Catch::Contains("the communicator has 4 ranks"));
        std::system(("rm -rf '" + dir + "'").c_str());
    }
    // A v-variant without its blocks (Score-P's): an alltoallv not
    // replayed, naming it and why (what a rank sends to each cannot be told
    // from the totals); a gatherv whose bytes do not add up to one call's
    // blocks (the root receives 64 B, the members send 4 x 64) not either.
    for (const char* op : {"GATHERV", "ALLTOALLV"}) {
        const std::string v = otf2_header(dir, 4) +
                              "    for l in locs:\n"
                              "        e = t.event_writer_from_location(l)\n"
                              "        e.mpi_collective_begin(100)\n"
                              "        e.mpi_collective_end(200, CollectiveOp." +
                              op + ", c, 0, 64, 64)\n";
        REQUIRE(std::system(("/usr/bin/python3 -c \"" + v + "\"").c_str()) == 0);
        const std::string why =
            refusal({{"trace.file", dir + "/traces.otf2"}, {"topology.kind", "qfdb"}, {"topology.nodes", "4"}}, false);
        if (op == std::string("GATHERV"))
            CHECK_THAT(why, Catch::Contains("MPI gatherv, collective 0 on communicator MPI_COMM_WORLD: the root "
                                            "receives 64 B, its members send 256: the bytes do not add up"));
        else
            CHECK_THAT(why, Catch::Contains("MPI alltoallv (rank 0 at tick 200) without its blocks") &&
                                Catch::Contains("cannot be told from every rank's totals"));
        std::system(("rm -rf '" + dir + "'").c_str());
    }
    // A message larger than a node's memory, or than the host can hold:
    // refused before anything is allocated (a 17 GiB send grew the
    // simulator to 15 GiB of host memory before it was killed).
    for (const char* gib : {"30", "400"}) {
        const std::string big = otf2_header(dir, 2) +
                                "    t.event_writer_from_location(locs[0]).mpi_send(100, 1, c, 0, " + std::string(gib) +
                                " << 30)\n"
                                "    t.event_writer_from_location(locs[1]).mpi_recv(200, 0, c, 0, " +
                                std::string(gib) + " << 30)\n";
        REQUIRE(std::system(("/usr/bin/python3 -c \"" + big + "\"").c_str()) == 0);
        Settings two{{"trace.file", dir + "/traces.otf2"}, {"topology.kind", "qfdb"}, {"topology.nodes", "2"}};
        if (std::string(gib) == "400") two.push_back({"dram.size", "1TiB"});
        const std::string why = refusal(two, false);
        if (std::string(gib) == "30")
            CHECK_THAT(why, Catch::Contains("its largest message, 32212254720 B (rank 0 at tick 100) does not fit in "
                                            "a node's memory"));
        else
            CHECK_THAT(why, Catch::Contains("trace.file") && Catch::Contains("the run needs at least 1200 GiB of "
                                                                             "host memory"));
        std::system(("rm -rf '" + dir + "'").c_str());
    }
    // A message without its other half: refused before the run, naming
    // ranks, tag and tick (it failed mid-run with "not a peer of this
    // endpoint"). (A message to the sender's own rank is replayed:
    // trace_comm_test.cpp.)
    auto two_ranks = [&](const std::string& events) {
        const std::string py = otf2_header(dir, 2) +
                               "    w0 = t.event_writer_from_location(locs[0])\n"
                               "    w1 = t.event_writer_from_location(locs[1])\n" +
                               events;
        REQUIRE(std::system(("/usr/bin/python3 -c \"" + py + "\"").c_str()) == 0);
        const std::string why =
            refusal({{"trace.file", dir + "/traces.otf2"}, {"topology.kind", "qfdb"}, {"topology.nodes", "2"}}, false);
        std::system(("rm -rf '" + dir + "'").c_str());
        return why;
    };
    CHECK_THAT(two_ranks("    w0.mpi_send(100, 1, c, 3, 8)\n    w0.mpi_send(200, 1, c, 3, 8)\n"
                         "    w1.mpi_recv(300, 0, c, 3, 8)\n"),
               Catch::Contains("rank 0 sends 2 message(s) with tag 3 to rank 1, which receives 1 from it") &&
                   Catch::Contains("the send at tick 200 (rank 0) has no matching receive"));
    CHECK_THAT(two_ranks("    w1.mpi_recv(300, 0, c, 5, 8)\n"),
               Catch::Contains("the receive at tick 300 (rank 1) has no matching send"));
    // A trace cut short (a writer killed, a partial copy): refused before
    // the run, naming the rank, whether its file lost its end or events
    // its definitions count (OTF2 would read past the bytes it has).
    auto cut = [&](const std::string& how) {
        std::system(("rm -rf '" + dir + "' && cp -r '" + std::string(VRDMASIM_SOURCE_DIR) +
                     "/configs/traces/transpose' '" + dir + "' && " + how)
                        .c_str());
        const std::string why = refusal({{"trace.file", dir + "/transpose.otf2"}});
        std::system(("rm -rf '" + dir + "'").c_str());
        return why;
    };
    CHECK_THAT(cut("truncate -s -7 '" + dir + "/transpose/3.evt'"),
               Catch::Contains("rank 3's file") && Catch::Contains("3.evt does not end as OTF2 ends a file") &&
                   Catch::Contains("cut short"));
    // Cut to 60 % with the end tokens put back: the events are missing.
    CHECK_THAT(
        cut("for f in '" + dir + "'/transpose/*.evt; do truncate -s 194 \"$f\"; printf '\\002\\001' >> \"$f\"; done"),
        Catch::Contains("rank 0") && Catch::Contains("its definitions count") &&
            Catch::Contains("cut short or damaged"));
    // A count in the anchor file larger than the file can hold: refused
    // before OTF2 reads the anchor (a count of locations, chunk sizes).
    const std::string patch = "| dd of='" + dir + "/transpose.otf2' bs=1 conv=notrunc status=none seek=";
    CHECK_THAT(cut("printf '\\000\\000\\000\\020' " + patch + "30"),
               Catch::Contains("transpose.otf2: the anchor file counts 268435456 locations"));
    CHECK_THAT(cut("printf '\\000\\000\\000\\020' " + patch + "12"),
               Catch::Contains("an event chunk size of 268435456 B"));
}

TEST_CASE("trace replay: a damaged count in the anchor file refused before OTF2 allocates for it", "[trace][config]") {
    // The fuzz finding (tests/fuzz/README.md): four bytes of the anchor,
    // its number of properties, made OTF2 allocate and walk 16 B a
    // property before it found them missing: 2^28 took vrdmasim 12 s and
    // 4.2 GB to say "cannot open the OTF2 archive", 0x6C000000 asked for
    // 29 GB. Run with 1 GiB of address space (a replay of the undamaged
    // trace fits in it): the refusal must name the count and the file, not
    // come from an allocation that failed.
    const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                            "/vrdmasim-trace-anchor-" + std::to_string(::getpid());
    auto run = [&](const char* properties) {
        std::string cmd = "rm -rf '" + dir + "' && cp -r '" + std::string(VRDMASIM_SOURCE_DIR) +
                          "/configs/traces/transpose' '" + dir + "'";
        // Offset 49: after the fixed fields and three empty strings.
        if (*properties)
            cmd += " && printf '" + std::string(properties) + "' | dd of='" + dir +
                   "/transpose.otf2' bs=1 seek=49 conv=notrunc status=none";
        REQUIRE(std::system(cmd.c_str()) == 0);
        const std::string sh = "cd '" + dir + "' && ulimit -v 1048576 && exec '" + std::string(VRDMASIM_EXE) +
                               "' run --topology.kind=torus --topology.x=2 --workload.kind=trace --trace.file='" + dir +
                               "/transpose.otf2' 2>&1";
        std::FILE* p = ::popen(sh.c_str(), "r");   // by sh -c
        REQUIRE(p);
        std::string out;
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        const int status = ::pclose(p);
        std::system(("rm -rf '" + dir + "'").c_str());
        return std::pair{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
    };
    const auto [fine, replayed] = run("");
    INFO(replayed);
    CHECK(fine == 0);
    for (const auto& [bytes, count] :
         {std::pair{"\\000\\000\\000\\020", "268435456"}, std::pair{"\\000\\000\\000\\154", "1811939328"}}) {
        const auto [code, why] = run(bytes);
        CHECK(code == 2);
        CHECK_THAT(why, Catch::Contains("trace.file") &&
                            Catch::Contains(dir + "/transpose.otf2: the anchor file counts " + count + " properties") &&
                            Catch::Contains("its 72 B hold at most") && !Catch::Contains("cannot open"));
    }
    // An anchor with strings and properties, as Score-P writes them, is
    // read as it is; one more property counted than it holds is refused.
    const std::string props = otf2_header(dir, 2) +
                              "    import _otf2\n"
                              "    _otf2.Archive_SetCreator(t.handle, 'a creator')\n"
                              "    _otf2.Archive_SetDescription(t.handle, 'a description')\n"
                              "    for k in ('A::ONE', 'B::TWO', 'C::THREE'):\n"
                              "        _otf2.Archive_SetProperty(t.handle, k, k.lower() * 40, False)\n"
                              "    t.event_writer_from_location(locs[0]).mpi_send(100, 1, c, 0, 8)\n"
                              "    t.event_writer_from_location(locs[1]).mpi_recv(200, 0, c, 0, 8)\n";
    REQUIRE(std::system(("rm -rf '" + dir + "' && /usr/bin/python3 -c \"" + props + "\"").c_str()) == 0);
    const Settings two{{"workload.kind", "trace"},
                       {"trace.file", dir + "/traces.otf2"},
                       {"topology.kind", "qfdb"},
                       {"topology.nodes", "2"}};
    CHECK(config_refusal(two).empty());
    // The count (u32, little-endian) follows the description's NUL.
    const std::string four =
        "b = open(a, 'rb').read(); i = b.index(bytes('a description', 'ascii') + bytes(1)) + 14; "
        "assert b[i:i + 4] == bytes((3, 0, 0, 0)); open(a, 'wb').write(b[:i] + bytes((4, 0, 0, 0)) + b[i + 4:])";
    REQUIRE(std::system(("/usr/bin/python3 -c \"a = '" + dir + "/traces.otf2'; " + four + "\"").c_str()) == 0);
    CHECK_THAT(config_refusal(two),
               Catch::Contains("the anchor file counts 4 properties") && Catch::Contains("hold at most 3"));
    std::system(("rm -rf '" + dir + "'").c_str());
    // A file that is not an anchor (the mapping file given as the trace).
    const std::string text = std::string(VRDMASIM_SOURCE_DIR) + "/configs/traces/solver-reversed.map";
    CHECK_THAT(config_refusal(
                   {{"workload.kind", "trace"}, {"trace.file", text}, {"topology.kind", "torus"}, {"topology.x", "2"}}),
               Catch::Contains("solver-reversed.map: the anchor file does not begin as an OTF2 anchor does"));
}
