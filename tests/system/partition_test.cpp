// What a run split across MPI ranks by whole boards would need of the
// workloads (docs/scaling.md, issue #42): the harness's byte check done by
// the node whose memory it is (check steps through the courier), and each
// workload's partition_refusal(): empty where its programs share nothing
// across boards but packets, check steps and values every rank computes
// alike; otherwise why not, naming the workload, the setting and the state.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/workload.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

// The first job's partition_refusal() of a System built (not run) with
// `s` (over `under`: a base for several kinds, a layer below), in a child
// process (one elaboration per process).
std::string refusal(const Settings& s, const Settings& under = {}) {
    return in_child_text([&s, &under] {
        return "[" + SystemSim(SystemSim::Defaults{under}, s).sys->workload().partition_refusal() + "]";
    });
}

// Splittable: the child answered, and with nothing.
void check_splittable(const Settings& s, const Settings& under = {}) {
    INFO("settings: " << [&] {
        std::string t;
        for (const auto& kv : s) t += kv.first + "=" + kv.second + " ";
        return t;
    }());
    CHECK(refusal(s, under) == "[]");
}

// Refused, the reason naming each of `words`.
void check_refused(const Settings& s, const std::vector<std::string>& words) {
    const std::string why = refusal(s);
    INFO("refusal: " << why);
    REQUIRE(why.size() > 2);
    CHECK(why.front() == '[');
    for (const std::string& w : words) CHECK_THAT(why, Catch::Contains(w));
}

}   // namespace

// ------------------------------------------------------- partition_refusal()

TEST_CASE("partition: stream splits by boards but for its read form and its receiver's notification latency",
          "[partition][stream]") {
    const Settings across = kTwoBoards + Settings{{"workload.src-node", "1"}, {"workload.dst-node", "6"}};
    check_splittable(across);
    check_refused(
        across + Settings{{"workload.operation", "read"}},
        {"workload.kind = stream", "workload.operation = read", "node 1 on board 0", "node 6 on board 1", "fills"});
    // Without a fill the reader guards its own destination: nothing crosses.
    check_splittable(across + Settings{{"workload.operation", "read"}, {"workload.fill-source", "false"}});
    // Within one board the read form is one rank's.
    check_splittable(kTwoBoards +
                     Settings{{"workload.src-node", "4"}, {"workload.dst-node", "6"}, {"workload.operation", "read"}});
    check_refused(across + Settings{{"workload.stream-notify", "ring"}},
                  {"workload.stream-notify = ring", "posted_at_"});
}

TEST_CASE("partition: pingpong and sendrecv split by boards, pingpong's read form does not", "[partition]") {
    const Settings across = kTwoBoards + Settings{{"workload.src-node", "0"}, {"workload.dst-node", "7"}};
    check_splittable(across + Settings{{"workload.kind", "pingpong"}, {"workload.iterations", "4"}});
    check_refused(across + Settings{{"workload.kind", "pingpong"}, {"workload.operation", "read"}},
                  {"workload.kind = pingpong", "workload.operation = read"});
    // The endpoints' wire-up goes through the start barrier's published values.
    check_splittable(across + Settings{{"workload.kind", "sendrecv"}});
    check_splittable(across + Settings{{"workload.kind", "sendrecv"}, {"workload.sendrecv-test", "bandwidth"}});
}

TEST_CASE("partition: the cluster kinds split by boards with one-sided writes, ring or counter arrivals",
          "[partition][cluster]") {
    const Settings small{{"workload.message-size", "4KiB"}, {"workload.iterations", "2"}};
    for (const char* kind : {"halo", "alltoall", "incast", "permutation"})
        check_splittable(Settings{{"workload.kind", kind}},
                         kTwoBoards + small + Settings{{"workload.total-bytes", "8KiB"}});
    check_splittable(kTwoBoards + small + Settings{{"workload.kind", "alltoall"}, {"workload.arrivals", "counter"}});
    check_refused(kTwoBoards + small + Settings{{"workload.kind", "halo"}, {"workload.arrivals", "flags"}},
                  {"workload.kind = halo", "workload.arrivals = flags", "completed_"});
    check_refused(kTwoBoards + small + Settings{{"workload.kind", "alltoall"}, {"workload.two-sided", "true"}},
                  {"workload.kind = alltoall", "workload.two-sided = true", "posted_at_"});
    check_refused(kTwoBoards + small + Settings{{"workload.kind", "halo"}, {"workload.operation", "read"}},
                  {"workload.kind = halo", "workload.operation = read", "fills"});
    // A plan inside one board: a QFDB alone.
    check_splittable(small +
                     Settings{{"topology.nodes", "4"}, {"workload.kind", "halo"}, {"workload.arrivals", "flags"}});
}

TEST_CASE("partition: overlap splits only within a board", "[partition][overlap]") {
    const Settings base{{"workload.kind", "overlap"}, {"workload.iterations", "2"}, {"workload.message-size", "4KiB"}};
    check_refused(kTwoBoards + base + Settings{{"workload.src-node", "0"}, {"workload.dst-node", "4"}},
                  {"workload.kind = overlap", "node 0 on board 0", "node 4 on board 1", "both nodes' memory"});
    check_splittable(kTwoBoards + base + Settings{{"workload.src-node", "4"}, {"workload.dst-node", "5"}});
}

TEST_CASE("partition: the lock workload's end-of-run checks are every node's", "[partition][lock]") {
    check_refused(kTwoBoards + Settings{{"workload.kind", "lock"}},
                  {"workload.kind = lock", "count_engine_completions"});
    check_splittable(Settings{{"topology.nodes", "4"}, {"workload.kind", "lock"}});
}

TEST_CASE("partition: fileserve's meter reads several nodes' statistics", "[partition][fileserve]") {
    const Settings files{{"workload.kind", "fileserve"}, {"fs.files", "4"},
                         {"fs.file-size", "64KiB"},      {"fileserve.requests", "4"},
                         {"fileserve.outstanding", "2"}, {"vm.memlock-limit", "64MiB"}};
    // Clients 1..5 of the server on node 0 (the first SSD's): two on board 1.
    check_refused(kTwoBoards + files + Settings{{"fileserve.clients", "5"}},
                  {"workload.kind = fileserve", "board 1", "Meter", "answers_"});
    check_splittable(kTwoBoards + files + Settings{{"fileserve.clients", "2"}});
    check_refused(
        kTwoBoards + files +
            Settings{{"fileserve.clients", "2"}, {"fileserve.access", "direct"}, {"fileserve.outstanding", "1"}},
        {"fileserve.access = direct", "Meter"});
}

TEST_CASE("partition: collectives split by boards but for the barrier's self-check", "[partition][collective]") {
    const Settings coll{{"workload.kind", "collective"}, {"workload.iterations", "2"}};
    check_splittable(kTwoBoards + coll + Settings{{"collective.op", "allreduce"}});
    check_splittable(kTwoBoards + coll +
                     Settings{{"collective.op", "alltoall"}, {"collective.transport", "one-sided"}});
    check_refused(kTwoBoards + coll + Settings{{"collective.op", "barrier"}},
                  {"workload.kind = collective", "collective.op = barrier", "rounds_"});
}

TEST_CASE("partition: a trace's span is every rank's", "[partition][trace]") {
    check_refused(
        kTwoBoards + Settings{{"workload.kind", "trace"},
                              {"trace.file", std::string(VRDMASIM_SOURCE_DIR) + "/configs/traces/solver/solver.otf2"}},
        {"workload.kind = trace", "trace.app_time"});
}

TEST_CASE("partition: the physical-address mode shares one table of keys", "[partition][physical]") {
    const Settings phys{{"smmu.enabled", "false"}, {"rdma.strategy", "pin"}};
    check_refused(kTwoBoards + phys + Settings{{"workload.src-node", "0"}, {"workload.dst-node", "4"}},
                  {"physical-address mode", "PhysicalKeys"});
    check_splittable(phys + Settings{{"topology.nodes", "4"}});
}

// ------------------------------------------------------------- check steps

TEST_CASE("partition: a cluster workload's byte check is the destination's, and catches a wrong byte there",
          "[partition][cluster]") {
    // Alltoall over two boards: every write's guard and check go to its
    // destination as check steps; the source's program fills its own
    // buffer and never touches the destination's memory.
    SystemSim s(kTwoBoards + Settings{{"workload.kind", "alltoall"},
                                      {"workload.message-size", "4KiB"},
                                      {"workload.iterations", "2"},
                                      {"workload.window", "2"}});
    Workload& w = s.sys->workload();
    const std::uint64_t n = 8, writes = n * (n - 1) * 2;
    std::map<CheckStep::Kind, std::uint64_t> steps;
    std::uint64_t across = 0, bad_key = 0, bad_len = 0;
    bool corrupted = false;
    w.set_courier([&](const CheckStep& step) {
        ++steps[step.kind];
        CHECK(step.from != step.node);
        if (step.kind != CheckStep::Kind::Verify) {
            w.perform(step);
            return;
        }
        across += w.board(step.from) != w.board(step.node);
        // The first check of a write across boards: a byte of the
        // destination goes wrong after it landed (the destination's own
        // process writes it), and the destination's check must see it.
        if (!corrupted && w.board(step.from) != w.board(step.node)) {
            corrupted = true;
            bad_key = step.key;
            bad_len = step.len;
            RdmaProcess& dst = s.sys->node(step.node).process(0);
            unsigned char b = 0;
            REQUIRE(dst.debug_read(step.addr + step.len / 2, &b, 1));
            b = static_cast<unsigned char>(b ^ 0x10);
            REQUIRE(dst.debug_write(step.addr + step.len / 2, &b, 1));
        }
        w.perform(step);
    });
    s.run();
    REQUIRE(s.finished());
    CHECK(steps[CheckStep::Kind::Fill] == 0);   // each source is its own program's
    CHECK(steps[CheckStep::Kind::Guard] == writes);
    CHECK(steps[CheckStep::Kind::Verify] == writes);
    CHECK(across == 4 * 4 * 2 * 2);   // each node writes to the other board's four, each round
    REQUIRE(corrupted);
    CHECK(bad_len == 4096);
    INFO("corrupted transfer " << bad_key);
    CHECK(s.log().transfers.value() == writes);
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().bytes_delivered.value() == writes * 4096);
    CHECK(s.log().mismatches.value() == 1);
    CHECK(s.log().bytes_verified.value() == (writes - 1) * 4096);
}

TEST_CASE("partition: a read's source is filled by the source node, asked by the reader", "[partition][stream]") {
    // The stream's read form: dst-node reads src-node's buffers; the harness
    // fills each source on its own node (a Fill step from the reader), and
    // the reader guards and checks its own destination.
    SystemSim s({{"topology.nodes", "4"},
                 {"workload.operation", "read"},
                 {"workload.src-node", "2"},
                 {"workload.dst-node", "1"},
                 {"workload.total-bytes", "256KiB"},
                 {"workload.message-size", "16KiB"}});
    Workload& w = s.sys->workload();
    std::map<CheckStep::Kind, std::uint64_t> steps;
    w.set_courier([&](const CheckStep& step) {
        ++steps[step.kind];
        CHECK(step.from == 1);
        CHECK(step.node == 2);
        w.perform(step);
    });
    s.run();
    s.check_all_verified(16, 256 * 1024);
    CHECK(steps[CheckStep::Kind::Fill] == 16);
    CHECK(steps[CheckStep::Kind::Guard] == 0);
    CHECK(steps[CheckStep::Kind::Verify] == 0);
}
