#define SC_INCLUDE_DYNAMIC_PROCESSES   // sc_spawn
// GlobalSync (src/core/global_sync.hpp): the start barrier and the end of
// the programs as rendezvous, released at the last arrival (handoff = call)
// or at the latest arrival + the lookahead (handoff = message, and a
// partitioned run's merge). Each TEST_CASE is its own elaboration (ctest
// runs each in its own process).
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include <systemc>

#include "src/core/global_sync.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

const sc_time kL(357, SC_NS);

// Parties that arrive at the given local times (each a thread that waits
// until its kernel time, runs ahead by `ahead`, arrives, and waits for the
// release), noting when each left the barrier and what it read of the
// values the others published before arriving.
struct Parties : sc_module {
    GlobalSync& sync;
    unsigned id;
    std::vector<sc_time> at;   // kernel time of each party's arrival
    sc_time ahead;   // its local time is this far ahead of the kernel's
    std::vector<sc_time> left;
    std::vector<std::uint64_t> read;
    Parties(sc_module_name n, GlobalSync& s, unsigned rv, std::vector<sc_time> times, sc_time local_ahead)
        : sc_module(n), sync(s), id(rv), at(std::move(times)), ahead(local_ahead), left(at.size()), read(at.size()) {
        for (unsigned k = 0; k < at.size(); ++k) sc_spawn([this, k] { party(k); }, sc_gen_unique_name("party"));
    }
    void party(unsigned k) {
        wait(at[k]);
        sync.publish(k, 7, 100 + k);
        sync.arrive(id, sc_time_stamp() + ahead);
        wait(ahead);   // its local time reached (RdmaProcess::wait_until syncs first)
        while (!sync.released(id)) wait(sync.release_event(id));
        left[k] = sc_time_stamp();
        const unsigned other = (k + 1) % static_cast<unsigned>(at.size());
        read[k] = sync.published(other, 7);
    }
};

}   // namespace

TEST_CASE("global sync: released at once, at the last arrival's local time", "[global_sync]") {
    GlobalSync sync(kL, false);
    const unsigned id = sync.rendezvous("start", 3);
    std::vector<sc_time> times{sc_time(10, SC_NS), sc_time(40, SC_NS), sc_time(25, SC_NS)};
    Parties p("p", sync, id, times, sc_time(2, SC_NS));
    bool called = false;
    sync.on_release(id, [&] {
        called = true;
        // In the last arrival's call, at its kernel time.
        CHECK(sc_time_stamp() == sc_time(40, SC_NS));
    });
    sc_start();
    CHECK(called);
    REQUIRE(sync.released(id));
    CHECK(sync.release_time(id) == sc_time(42, SC_NS));
    for (const sc_time& t : p.left) CHECK(t == sc_time(42, SC_NS));
    CHECK(p.read == std::vector<std::uint64_t>{101, 102, 100});
}

TEST_CASE("global sync: deferred, released at the latest arrival's local time + the lookahead", "[global_sync]") {
    GlobalSync sync(kL, true);
    const unsigned id = sync.rendezvous("start", 3);
    std::vector<sc_time> times{sc_time(10, SC_NS), sc_time(40, SC_NS), sc_time(25, SC_NS)};
    Parties p("p", sync, id, times, sc_time(2, SC_NS));
    sc_time called_at = SC_ZERO_TIME;
    sync.on_release(id, [&] { called_at = sc_time_stamp(); });
    sc_start();
    const sc_time release = sc_time(42, SC_NS) + kL;
    CHECK(sync.release_time(id) == release);
    CHECK(called_at == release);
    for (const sc_time& t : p.left) CHECK(t == release);
    CHECK(p.read == std::vector<std::uint64_t>{101, 102, 100});
}

TEST_CASE("global sync: the latest arrival need not be the last one", "[global_sync]") {
    // A party running ahead arrives first with the latest local time.
    GlobalSync sync(kL, true);
    const unsigned id = sync.rendezvous("end", 2);
    sc_time called_at = SC_ZERO_TIME;
    sync.on_release(id, [&] { called_at = sc_time_stamp(); });
    struct Two : sc_module {
        GlobalSync& s;
        unsigned id;
        Two(sc_module_name n, GlobalSync& g, unsigned i) : sc_module(n), s(g), id(i) {
            sc_spawn([this] { s.arrive(id, sc_time(900, SC_NS)); }, "ahead");
            sc_spawn(
                [this] {
                    wait(100, SC_NS);
                    s.arrive(id, sc_time(100, SC_NS));
                },
                "behind");
        }
    } two("two", sync, id);
    sc_start();
    CHECK(called_at == sc_time(900, SC_NS) + kL);
}

TEST_CASE("global sync: partitioned, arrivals are collected and merge() releases them as deferred does",
          "[global_sync]") {
    // Two "ranks" in one process: the first's parties arrive here, the
    // second's contribution is made by hand, as its window loop would send it.
    GlobalSync sync(kL, true);
    sync.set_partitioned(true);
    const unsigned id = sync.rendezvous("start", 3);
    std::vector<sc_time> times{sc_time(10, SC_NS), sc_time(40, SC_NS)};
    // Parties 0 and 1 read the value of parties 1 and 0 (k + 1 mod 2).
    Parties p("p", sync, id, times, sc_time(2, SC_NS));
    const sc_time window = kL;
    sc_start(window);   // the first window: both arrive, nothing is released
    CHECK(sync.arrivals(id) == 0);
    CHECK_FALSE(sync.complete(id));
    CHECK_FALSE(sync.released(id));
    std::vector<GlobalSync::Contribution> mine = sync.take();
    REQUIRE(mine.size() == 1);
    CHECK(mine[0].id == id);
    CHECK(mine[0].arrivals == 2);
    CHECK(mine[0].latest == sc_time(42, SC_NS));
    CHECK(mine[0].values.size() == 2);
    CHECK(sync.take().empty());   // taken once
    // The other rank: one party at local time 300 ns, and a value of node 9.
    std::vector<GlobalSync::Contribution> theirs{{id, 1, sc_time(300, SC_NS), {{9, 7, 909}}}};
    // Every rank's, in rank order, through bytes as MPI would carry them.
    std::vector<GlobalSync::Contribution> all = mine;
    all.insert(all.end(), theirs.begin(), theirs.end());
    const std::vector<unsigned char> bytes = GlobalSync::serialize(all);
    const std::vector<GlobalSync::Contribution> back = GlobalSync::deserialize(bytes);
    CHECK(back == all);
    sync.merge(back);
    REQUIRE(sync.complete(id));
    CHECK(sync.release_time(id) == sc_time(300, SC_NS) + kL);   // the one-process deferred time
    CHECK_FALSE(sync.released(id));   // not before its time
    CHECK(sync.published(9, 7) == 909);
    CHECK(sync.published(0, 7) == 100);
    sc_start();
    for (const sc_time& t : p.left) CHECK(t == sc_time(300, SC_NS) + kL);
    CHECK(p.read == std::vector<std::uint64_t>{101, 100});
}

TEST_CASE("global sync: one process deferred and a partitioned merge release alike", "[global_sync]") {
    // The same arrivals (local times 42 and 300 ns), once in one process,
    // once split and merged: the same release time.
    sc_time one, split;
    {
        GlobalSync sync(kL, true);
        const unsigned id = sync.rendezvous("start", 2);
        sync.arrive(id, sc_time(42, SC_NS));
        sync.arrive(id, sc_time(300, SC_NS));
        one = sync.release_time(id);
    }
    {
        GlobalSync a(kL, true), b(kL, true);
        a.set_partitioned(true);
        b.set_partitioned(true);
        const unsigned ia = a.rendezvous("start", 2), ib = b.rendezvous("start", 2);
        REQUIRE(ia == ib);
        a.arrive(ia, sc_time(42, SC_NS));
        b.publish(5, 1, 55);
        b.arrive(ib, sc_time(300, SC_NS));
        std::vector<GlobalSync::Contribution> all = a.take();
        for (auto& c : b.take()) all.push_back(c);
        const auto bytes = GlobalSync::serialize(all);
        a.merge(GlobalSync::deserialize(bytes));
        b.merge(GlobalSync::deserialize(bytes));
        split = a.release_time(ia);
        CHECK(b.release_time(ib) == split);
        CHECK(a.published(5, 1) == 55);
        CHECK(b.published(5, 1) == 55);
    }
    CHECK(one == sc_time(300, SC_NS) + kL);
    CHECK(split == one);
}

TEST_CASE("global sync: values published alone travel too, misuse is refused", "[global_sync]") {
    GlobalSync sync(kL, true);
    sync.set_partitioned(true);
    const unsigned id = sync.rendezvous("start", 1);
    sync.publish(3, 2, 33);
    const auto c = sync.take();
    REQUIRE(c.size() == 1);
    CHECK(c[0].id == GlobalSync::kNoRendezvous);
    CHECK(c[0].values.size() == 1);
    CHECK_THROWS_AS(sync.published(4, 2), std::logic_error);
    sync.arrive(id, SC_ZERO_TIME);
    CHECK_THROWS_AS(sync.arrive(id, SC_ZERO_TIME), std::logic_error);   // one party only
    std::vector<unsigned char> bytes = GlobalSync::serialize(c);
    bytes.pop_back();
    CHECK_THROWS_AS(GlobalSync::deserialize(bytes), std::invalid_argument);
    CHECK_THROWS_AS(sync.merge({{id, 2, SC_ZERO_TIME, {}}}), std::logic_error);   // more than its parties
}
