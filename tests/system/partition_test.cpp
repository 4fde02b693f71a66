// What a run split across MPI ranks by whole boards would need of the
// workloads (docs/scaling.md, issue #42): the harness's byte check done by
// the node whose memory it is (check steps through the courier).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/workload.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

// Two QFDBs in a row: nodes 0-3 on board 0, 4-7 on board 1.
const Settings kTwoBoards{{"topology.kind", "torus"}, {"topology.x", "2"}};

Settings operator+(Settings a, const Settings& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}   // namespace

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
        across += step.from / 4 != step.node / 4;
        // The first check of a write across boards: a byte of the
        // destination goes wrong after it landed (the destination's own
        // process writes it), and the destination's check must see it.
        if (!corrupted && step.from / 4 != step.node / 4) {
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
