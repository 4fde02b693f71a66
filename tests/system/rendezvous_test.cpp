// The workloads' global rendezvous in the whole System (src/core/global_sync.hpp,
// docs/scaling.md "What the workloads share across nodes", issue #42): in
// exact time order (the default) on more than one board, and in the
// approximate time order with board-link.handoff = message, a job's start
// barrier and the end of the programs are released a board link's latency
// after their latest arrival, the time a partitioned run's window loop can
// release them at; in the approximate order with handoff = call at the last
// arrival. The cases run in the approximate order unless they say. And the workloads
// that a partitioned run builds with the processes of its own nodes only
// (apps nullptr elsewhere): stream, pingpong, sendrecv, the collectives and
// the cluster kinds.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/workload.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

// A run of `s` in a child process: its start barrier's arrivals and
// release, the end's, the first post, and the byte check's figures (ps and counts).
std::map<std::string, double> start_and_end(const Settings& s, bool approximate = true) {
    return in_child_figures([&s, approximate] {
        SystemSim sim(approximate ? s + Settings{{"router.link-order", "time-approximate"}} : s);
        sim.run();
        GlobalSync& g = sim.sys->global_sync();
        const unsigned start = sim.sys->workload().start_rendezvous(), end = sim.sys->end_rendezvous();
        std::ostringstream os;
        auto ps = [](const sc_time& t) { return static_cast<double>(t.value()); };
        os << "deferred " << g.deferred() << " lookahead " << ps(g.lookahead()) << " start_latest "
           << ps(g.latest(start)) << " start_release " << ps(g.release_time(start)) << " end_latest "
           << ps(g.latest(end)) << " end_release " << ps(g.release_time(end)) << " end_released " << g.released(end)
           << " first_post " << ps(sim.log().first_post) << " finished " << sim.finished() << " transfers "
           << sim.log().transfers.value() << " verified " << sim.log().bytes_verified.value() << " delivered "
           << sim.log().bytes_delivered.value() << " mismatches " << sim.log().mismatches.value() << "\n";
        return os.str();
    });
}

// `first_post_follows`: the workload's first post follows the barrier
// with nothing crossing a board in between (not a collective: its first
// messages wait for the iteration's barrier, over the network).
void check_later_by_lookahead(const Settings& s, bool first_post_follows = true) {
    const auto call = start_and_end(s);
    const auto message = start_and_end(s + Settings{{"board-link.handoff", "message"}});
    // Exact time order releases as the cut links do, with no setting.
    const auto exact = start_and_end(s, false);
    CHECK(exact.at("deferred") == 1);
    CHECK(exact.at("start_release") == exact.at("start_latest") + 357000.0);
    INFO("call: start " << call.at("start_release") << " ps; message: start " << message.at("start_release"));
    // Nothing crosses a board before the start: the arrivals are the same.
    REQUIRE(call.at("finished") == 1);
    REQUIRE(message.at("finished") == 1);
    CHECK(call.at("deferred") == 0);
    CHECK(message.at("deferred") == 1);
    CHECK(message.at("lookahead") == 357000.0);   // board-link.latency
    CHECK(message.at("start_latest") == call.at("start_latest"));
    // handoff = call: the last arrival's local time, which may be before
    // the latest's (a program that ran ahead of the kernel arrived first):
    // each program goes on at the later of the release and its own time,
    // so the last to pass the barrier does at the latest arrival's time.
    CHECK(call.at("start_release") <= call.at("start_latest"));
    // handoff = message: exactly a board link's latency after that.
    CHECK(message.at("start_release") == message.at("start_latest") + 357000.0);
    CHECK(message.at("start_release") - call.at("start_latest") == 357000.0);
    // The first post follows the release by what the programs do after it, the same in both.
    if (first_post_follows) CHECK(message.at("first_post") - call.at("first_post") == 357000.0);
    // The end: released (the daemons stopped) a lookahead after the last program's end.
    CHECK(call.at("end_released") == 1);
    CHECK(message.at("end_released") == 1);
    CHECK(call.at("end_release") <= call.at("end_latest"));   // the last call's local time
    CHECK(message.at("end_release") == message.at("end_latest") + 357000.0);
    for (const auto* f : {&call, &message}) {
        CHECK(f->at("transfers") > 0);
        CHECK(f->at("mismatches") == 0);
        CHECK(f->at("verified") == f->at("delivered"));
    }
}

}   // namespace

TEST_CASE("rendezvous: stream across boards starts a board link's latency later with cut links",
          "[rendezvous][stream]") {
    check_later_by_lookahead(kTwoBoards + Settings{{"workload.src-node", "1"},
                                                   {"workload.dst-node", "6"},
                                                   {"workload.message-size", "16KiB"},
                                                   {"workload.total-bytes", "128KiB"}});
}

TEST_CASE("rendezvous: pingpong across boards starts a board link's latency later with cut links",
          "[rendezvous][pingpong]") {
    check_later_by_lookahead(kTwoBoards + Settings{{"workload.kind", "pingpong"},
                                                   {"workload.src-node", "0"},
                                                   {"workload.dst-node", "7"},
                                                   {"workload.iterations", "4"}});
}

TEST_CASE("rendezvous: a halo starts a board link's latency later with cut links", "[rendezvous][cluster]") {
    check_later_by_lookahead(kTwoBoards + Settings{{"workload.kind", "halo"},
                                                   {"workload.message-size", "4KiB"},
                                                   {"workload.iterations", "2"}});
}

TEST_CASE("rendezvous: collectives across boards start a board link's latency later with cut links",
          "[rendezvous][collective]") {
    for (const char* transport : {"two-sided", "one-sided"})
        check_later_by_lookahead(kTwoBoards + Settings{{"workload.kind", "collective"},
                                                       {"collective.op", "allreduce"},
                                                       {"collective.transport", transport},
                                                       {"workload.iterations", "2"}},
                                 false);
}

TEST_CASE("rendezvous: a single QFDB has no cut links: released at once even with handoff = message", "[rendezvous]") {
    const auto f = start_and_end({{"topology.nodes", "4"}, {"board-link.handoff", "message"}});
    CHECK(f.at("deferred") == 0);
    CHECK(f.at("finished") == 1);
    CHECK(f.at("start_release") <= f.at("start_latest"));   // the last arrival's (handoff = call)
}

TEST_CASE("rendezvous: every job's start and the end of all their programs", "[rendezvous]") {
    const std::string text = in_child_text([] {
        SystemSim sim(kTwoBoards + Settings{{"workload.kind", "halo"},
                                            {"workload.message-size", "4KiB"},
                                            {"workload.iterations", "1"},
                                            {"node.processes", "2"},
                                            {"router.link-order", "time-approximate"},
                                            {"board-link.handoff", "message"}});
        GlobalSync& g = sim.sys->global_sync();
        std::ostringstream os;
        // Registered in one order on every rank: the end, then each job's start.
        os << g.name(0) << " " << g.parties(0) << " " << g.name(1) << " " << g.parties(1) << " " << g.name(2) << " "
           << g.parties(2) << " " << sim.sys->workloads()[1]->start_rendezvous();
        sim.run();
        os << " " << g.released(0) << g.released(1) << g.released(2);
        return os.str();
    });
    CHECK(text == "end 16 job0.start 8 job1.start 8 2 111");
}

// ------------------------------------------------------------- absent nodes

namespace {

// Job 0's workload of `s` (over `under`: a base for several kinds, a layer
// below) built again, as a partitioned run's rank 0 would build it: the
// processes of board 0 (nodes 0-3) only. Its programs' count, which nodes
// got a program, and its refusal; or the error that refused it.
std::string built_on_board0(const Settings& s, const Settings& under = {}) {
    return in_child_text([&s, &under] {
        SystemSim sim(SystemSim::Defaults{under}, s);
        std::vector<RdmaProcess*> apps;
        for (std::size_t i = 0; i < sim.sys->size(); ++i) {
            RdmaProcess& a = sim.sys->node(i).app;
            a.program = nullptr;
            apps.push_back(i < 4 ? &a : nullptr);
        }
        // Its own statistics (job 0's are the system's workload's).
        StatRegistry stats;
        const SimContext ctx{*sim.cfg, stats, sim.tracer};
        std::ostringstream os;
        try {
            auto w = Workload::create(ctx, apps, 0);
            os << "programs " << w->programs() << " present";
            for (std::size_t i = 0; i < apps.size(); ++i) os << " " << w->present(static_cast<unsigned>(i));
            os << " running";
            for (RdmaProcess* a : apps) os << " " << (a && a->program ? 1 : 0);
        } catch (const ConfigError& e) {
            os << "refused: " << e.what();
        }
        return os.str();
    });
}

}   // namespace

TEST_CASE(
    "rendezvous: stream, pingpong, sendrecv, collectives, the cluster kinds and synthetic traffic build with "
    "one rank's nodes",
    "[rendezvous][partition]") {
    const Settings across = kTwoBoards + Settings{{"workload.src-node", "1"}, {"workload.dst-node", "6"}};
    CHECK(built_on_board0(across) == "programs 2 present 1 1 1 1 0 0 0 0 running 0 1 0 0 0 0 0 0");
    CHECK(built_on_board0(across + Settings{{"workload.kind", "pingpong"}}) ==
          "programs 2 present 1 1 1 1 0 0 0 0 running 0 1 0 0 0 0 0 0");
    const Settings small{{"workload.message-size", "4KiB"}, {"workload.iterations", "1"}};
    for (const char* kind : {"halo", "alltoall", "incast", "permutation"})
        CHECK(built_on_board0(Settings{{"workload.kind", kind}}, kTwoBoards + small) ==
              "programs 8 present 1 1 1 1 0 0 0 0 running 1 1 1 1 0 0 0 0");
    CHECK(built_on_board0(kTwoBoards + small + Settings{{"workload.kind", "halo"}, {"workload.operation", "read"}}) ==
          "programs 8 present 1 1 1 1 0 0 0 0 running 1 1 1 1 0 0 0 0");
    // sendrecv and the collectives connect through published values too.
    CHECK(built_on_board0(across + Settings{{"workload.kind", "sendrecv"}}) ==
          "programs 2 present 1 1 1 1 0 0 0 0 running 0 1 0 0 0 0 0 0");
    for (const char* transport : {"two-sided", "one-sided"})
        CHECK(built_on_board0(kTwoBoards + Settings{{"workload.kind", "collective"},
                                                    {"collective.op", "allreduce"},
                                                    {"collective.transport", transport}}) ==
              "programs 8 present 1 1 1 1 0 0 0 0 running 1 1 1 1 0 0 0 0");
    // Synthetic traffic: each node's source on its own rank (its
    // destinations' packets come to it as notes).
    CHECK(built_on_board0(kTwoBoards + Settings{{"workload.kind", "synthetic"}}) ==
          "programs 8 present 1 1 1 1 0 0 0 0 running 1 1 1 1 0 0 0 0");
    // The kinds not carried yet are refused as a configuration (exit status
    // 2 for the run), naming why.
    CHECK_THAT(built_on_board0(across + Settings{{"workload.kind", "overlap"}, {"workload.iterations", "1"}}),
               Catch::StartsWith("refused: workload.kind = overlap is not built for a run split across MPI ranks"));
    CHECK_THAT(
        built_on_board0(kTwoBoards + small + Settings{{"workload.kind", "alltoall"}, {"workload.two-sided", "true"}}),
        Catch::Contains("with workload.two-sided = true is not built for a run split across MPI ranks"));
}
