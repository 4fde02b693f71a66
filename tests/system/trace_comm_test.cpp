// Trace replay (workloads/README.md "Trace replay") of MPI_Sendrecv and of
// communicators other than MPI_COMM_WORLD, on traces laid out as Score-P
// writes them (tests/fixtures/mpi_comm_traces.py, with the OTF2 writer):
// a ring of 16 KiB MPI_Sendrecv (above the eager threshold) finishes, with
// the same figures run again, where a Send then a Recv of the same sizes
// deadlocks as it does in MPI; MPI_Comm_split, MPI_Comm_dup and a
// cartesian communicator with collectives and messages on each, ranks
// translated through their groups, messages of the same source and tag on
// two communicators at once not crossing; and the refusals (a rank not in
// the communicator, a peer outside it, a Sendrecv of another shape). Each
// run in a child process.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "child_process.hpp"
#include "src/sim/invariants.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;

namespace {

using CommFigures = std::map<std::string, double>;

std::string comm_scratch() {
    return std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/vrdmasim-trace-comm-" +
           std::to_string(::getpid());
}

// The archive tests/fixtures/mpi_comm_traces.py writes for `args`.
std::string write_trace(const std::string& name, const std::string& args) {
    const std::string dir = comm_scratch() + "/" + name;
    const std::string cmd = "rm -rf '" + dir + "' && /usr/bin/python3 " + std::string(VRDMASIM_SOURCE_DIR) +
                            "/tests/fixtures/mpi_comm_traces.py '" + dir + "' " + args;
    REQUIRE(std::system(cmd.c_str()) == 0);
    return dir + "/traces.otf2";
}

// Four ranks on one QFDB.
CommFigures comm_replay(const std::string& file, const Settings& extra = {}) {
    Settings s{{"topology.kind", "qfdb"},
               {"topology.nodes", "4"},
               {"workload.kind", "trace"},
               {"trace.file", file},
               {"sim.time-limit", "50ms"}};
    s.insert(s.end(), extra.begin(), extra.end());
    return in_child_figures([&s] {
        std::ostringstream os;
        SystemSim sim(s);
        sim.run();
        const TransferLog& l = sim.log();
        os << "finished " << sim.finished() << "\n";
        if (sim.finished()) {
            const auto v = sim.self_check();
            if (!v.empty()) std::cerr << describe(v) << "\n";
            // (and the payload announced before the run, from the trace
            // alone, is what the run delivered: Workload::planned_bytes)
            os << "clean "
               << (v.empty() && l.errors.value() == 0 && l.mismatches.value() == 0 &&
                   l.bytes_verified.value() == l.bytes_delivered.value() && l.bytes_verified.value() > 0 &&
                   sim.sys->workloads().at(0)->planned_bytes() == static_cast<std::int64_t>(l.bytes_delivered.value()))
               << "\n";
        }
        os << "planned " << sim.sys->workloads().at(0)->planned_bytes() << "\n";
        os << "mismatches " << l.mismatches.value() << "\n";
        os << "messages " << sim.counter("workload.trace.messages") << "\n";
        os << "collectives " << sim.counter("workload.trace.collectives") << "\n";
        os << "app " << sim.scalar("workload.trace.app_time") << "\n";
        os << "mpi " << sim.scalar("workload.trace.mpi_time") << "\n";
        os << "verified " << l.bytes_verified.value() << "\n";
        return os.str();
    });
}

void comm_clean(const CommFigures& f) {
    REQUIRE(f.count("finished"));
    REQUIRE(f.at("finished") == 1);
    REQUIRE(f.count("clean"));
    CHECK(f.at("clean") == 1);
}

}   // namespace

TEST_CASE("trace replay: a ring of 16 KiB MPI_Sendrecv finishes, a Send then a Recv deadlocks as in MPI", "[trace]") {
    // 4 ranks x 3 rounds, 16 KiB each way: above msg.eager-threshold, so a
    // blocking send waits for its receive (rendezvous).
    const std::string sendrecv = write_trace("ring", "ring --bytes 16384");
    const CommFigures a = comm_replay(sendrecv), b = comm_replay(sendrecv);
    comm_clean(a);
    comm_clean(b);
    CHECK(a.at("messages") == 4 * 3);
    CHECK(a.at("verified") == 4 * 3 * 16384);
    // The same figures run again (functions of the model alone).
    CHECK(a.at("app") == b.at("app"));
    CHECK(a.at("mpi") == b.at("mpi"));
    // MPI_Sendrecv_replace: the same shape, replayed the same way.
    const CommFigures replace = comm_replay(write_trace("replace", "ring --bytes 16384 --call MPI_Sendrecv_replace"));
    comm_clean(replace);
    CHECK(replace.at("app") == a.at("app"));
    // Below the threshold too.
    comm_clean(comm_replay(write_trace("small", "ring --bytes 1024")));
    // An MPI_Send then an MPI_Recv, each its own call: every rank's send
    // waits for a receive no rank has posted: deadlocked in MPI, and in
    // the replay (the run ends at sim.time-limit, unfinished), not made to
    // succeed. Eager (1 KiB), the same program finishes.
    const CommFigures stuck = comm_replay(write_trace("stuck", "ring --bytes 16384 --call send-recv"));
    CHECK(stuck.at("finished") == 0);
    CHECK(stuck.at("verified") == 0);
    comm_clean(comm_replay(write_trace("eager", "ring --bytes 1024 --call send-recv")));
    std::system(("rm -rf '" + comm_scratch() + "'").c_str());
}

TEST_CASE("trace replay: MPI_Comm_split, MPI_Comm_dup and a cartesian communicator", "[trace]") {
    const std::string comms = write_trace("comms", "comms");
    const CommFigures two = comm_replay(comms), one = comm_replay(comms, {{"collective.transport", "one-sided"}}),
                      ring = comm_replay(comms, {{"collective.allreduce-algorithm", "ring"}});
    for (const CommFigures* f : {&two, &one, &ring}) comm_clean(*f);
    // In each half a message (2); on the world and its dup, from rank 0 to
    // 1 and from 2 to 3, tag 9, one each (4), received in the other order
    // (the dup's first) without crossing (each is checked byte for byte
    // and by its length, 100 B and 200 B); from cartesian rank 0 to 1
    // (world 3 to 2): 7 messages.
    CHECK(two.at("messages") == 7);
    CHECK(two.at("mismatches") == 0);
    // Each rank: three creations (MPICH's context-id allreduce on
    // MPI_COMM_WORLD), an allreduce in its half and a bcast on the
    // cartesian communicator; the frees are local (not counted).
    CHECK(two.at("collectives") == 4 * 5);
    CHECK(one.at("collectives") == 4 * 5);
    CHECK(two.at("verified") == one.at("verified"));
    // Run again: the same figures.
    const CommFigures again = comm_replay(comms);
    CHECK(again.at("app") == two.at("app"));
    std::system(("rm -rf '" + comm_scratch() + "'").c_str());
}

TEST_CASE("trace replay: Score-P's v-variants and reduce-scatters, their blocks derived, and a self message",
          "[trace]") {
    // tests/fixtures/mpi_comm_traces.py vectors: each rank's bytes in all,
    // from which the replay derives every member's blocks (a gatherv's from
    // what each rank sends, a scatterv's and reduce-scatter's from what
    // each receives).
    const CommFigures f = comm_replay(write_trace("vectors", "vectors"));
    comm_clean(f);
    CHECK(f.at("collectives") == 4 * 5);
    CHECK(f.at("messages") == 4);   // each rank's to itself
    // Every result checked: the gatherv's root 336 B, the scatterv's blocks
    // 216 B, every rank's allgatherv 72 B, the reduce-scatter's blocks in
    // 64-bit words (8 + 16 + 0 + 8 B), the _block's 4 x 40 B; the self
    // messages 4 x 1000 B.
    CHECK(f.at("verified") == 336 + 216 + 4 * 72 + 32 + 160 + 4000);
    // ... and announced before the run (the derived blocks' results).
    CHECK(f.at("planned") == 336 + 216 + 4 * 72 + 32 + 160 + 4000);
    std::system(("rm -rf '" + comm_scratch() + "'").c_str());
}

TEST_CASE("trace replay: Score-P's non-blocking collectives, in flight across a blocking one", "[trace]") {
    // tests/fixtures/mpi_comm_traces.py nonblocking: an iallreduce and an
    // ibcast started, a gatherv (its blocks derived: numbered among the
    // blocking calls), then both waited for in the reverse order.
    const CommFigures f = comm_replay(write_trace("nonblocking", "nonblocking"));
    comm_clean(f);
    CHECK(f.at("collectives") == 4 * 3);
    // Every result checked: the allreduce's 4 x 64 B, the bcast's 4 x 32 B
    // (its root's too), the gatherv's root 336 B.
    CHECK(f.at("verified") == 4 * 64 + 4 * 32 + 336);
    CHECK(f.at("planned") == 4 * 64 + 4 * 32 + 336);   // announced before the run
    std::system(("rm -rf '" + comm_scratch() + "'").c_str());
}

TEST_CASE("trace replay: what it refuses on communicators, in MPI_Sendrecv and of non-blocking collectives",
          "[trace][config]") {
    // A script of the OTF2 writer: 4 ranks, the world, a communicator
    // `half` of ranks 0 and 1; the caller's events with `w` (the ranks'
    // writers), `world`, `half`.
    auto refusal = [](const std::string& events) {
        const std::string dir = comm_scratch() + "/refused";
        const std::string py =
            "import otf2\n"
            "from otf2.enums import *\n"
            "with otf2.writer.open('" +
            dir +
            "', timer_resolution=1000000000) as t:\n"
            "    d = t.definitions\n"
            "    n = d.system_tree_node('m')\n"
            "    locs = [d.location('L', type=LocationType.CPU_THREAD, group=d.location_group('R%d' % r, "
            "system_tree_parent=n)) for r in range(4)]\n"
            "    d.group('MPI', group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=tuple(locs))\n"
            "    world = d.comm('MPI_COMM_WORLD', d.group('W', group_type=GroupType.COMM_GROUP, "
            "paradigm=Paradigm.MPI, members=(0, 1, 2, 3)))\n"
            "    half = d.comm('half', d.group('H', group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, "
            "members=(0, 1)), world)\n"
            "    sr = d.region('MPI_Sendrecv', region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI)\n"
            "    w = [t.event_writer_from_location(l) for l in locs]\n" +
            events;
        REQUIRE(std::system(("rm -rf '" + dir + "' && /usr/bin/python3 -c \"" + py + "\"").c_str()) == 0);
        return config_refusal({{"workload.kind", "trace"},
                               {"trace.file", dir + "/traces.otf2"},
                               {"topology.kind", "qfdb"},
                               {"topology.nodes", "4"}});
    };
    CHECK_THAT(refusal("    w[2].mpi_send(100, 1, half, 0, 8)\n"),
               Catch::Contains("MPI send on communicator half (rank 2 at tick 100): the rank is not a member of it"));
    CHECK_THAT(refusal("    w[0].mpi_send(100, 2, half, 0, 8)\n"),
               Catch::Contains("MPI send with peer rank 2 (rank 0 at tick 100): its communicator has 2 ranks"));
    CHECK_THAT(refusal("    w[0].enter(100, sr)\n    w[0].mpi_send(110, 1, world, 0, 8)\n"
                       "    w[0].mpi_send(120, 2, world, 0, 8)\n    w[0].leave(130, sr)\n"),
               Catch::Contains("MPI_Sendrecv with a second send (rank 0 at tick 120)"));
    // A non-blocking v-variant in a trace without its blocks (Score-P's):
    // its blocks are not derived.
    CHECK_THAT(refusal("    w[0].non_blocking_collective_request(100, 7)\n"
                       "    w[0].non_blocking_collective_complete(200, CollectiveOp.GATHERV, world, 0, 8, 32, 7)\n"),
               Catch::Contains("a non-blocking MPI gatherv without its blocks (vrdmasim::blocks) (rank 0 at tick 200): "
                               "its replay is not built"));
    // A message and a receive of the same ranks and tag on two
    // communicators do not match: named with the communicator.
    CHECK_THAT(refusal("    w[0].mpi_send(100, 1, half, 3, 8)\n    w[1].mpi_recv(200, 0, world, 3, 8)\n"),
               Catch::Contains("rank 0 sends 0 message(s) with tag 3 on communicator MPI_COMM_WORLD to rank 1, which "
                               "receives 1 from it"));
    std::system(("rm -rf '" + comm_scratch() + "'").c_str());
}
