// Software takes turns (src/core/software_turns.hpp): the marked threads of
// a group that wake at one instant act one at a time, in the order of their
// keys, whatever the order SystemC runs them in (here: the order they were
// made in), after the unmarked threads of that instant; a thread that wakes
// again at the instant goes after those waiting; groups do not wait for
// each other. Each TEST_CASE is its own elaboration (ctest runs each in its
// own process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/instant_end.hpp"
#include "src/core/software_turns.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

struct Log {
    // (time in ns, who) in the order they acted
    std::vector<std::pair<long, std::string>> acts;
    void act(const std::string& who) {
        acts.emplace_back(static_cast<long>(sc_time_stamp().to_seconds() * 1e9 + 0.5), who);
    }
};

// A program: every 10 ns, for `rounds` instants, it acts; with `again`, it
// also acts a second time at each instant, after a delta.
struct Program : sc_module {
    Log& log;
    std::string group;
    int rounds;
    bool again;
    Program(sc_module_name n, Log& l, std::string g, int r, bool a = false)
        : sc_module(n), log(l), group(std::move(g)), rounds(r), again(a) {
        SC_HAS_PROCESS(Program);
        SC_THREAD(run);
    }
    void run() {
        software_turns::enter(group);
        for (int i = 0; i < rounds; ++i) {
            wait(10, SC_NS);
            log.act(basename());
            if (again) {
                wait(SC_ZERO_TIME);
                log.act(std::string(basename()) + "'");
            }
        }
    }
};

// Hardware: acts at the same instants, unmarked.
struct Device : sc_module {
    Log& log;
    int rounds;
    Device(sc_module_name n, Log& l, int r) : sc_module(n), log(l), rounds(r) {
        SC_HAS_PROCESS(Device);
        SC_THREAD(run);
    }
    void run() {
        for (int i = 0; i < rounds; ++i) {
            wait(10, SC_NS);
            log.act(basename());
        }
    }
};

// The order the keys give the programs `names` (their modules' names: the
// threads are "<name>.run") at `ns`.
std::vector<std::string> by_key(std::vector<std::string> names, long ns) {
    std::sort(names.begin(), names.end(), [ns](const std::string& a, const std::string& b) {
        const std::uint64_t ps = static_cast<std::uint64_t>(ns) * 1000;
        return software_turns::order_key((a + ".run").c_str(), ps) <
               software_turns::order_key((b + ".run").c_str(), ps);
    });
    return names;
}

void check_order(const Log& log, const std::vector<std::string>& full, int rounds, bool device) {
    std::size_t i = 0;
    bool first_a = false, first_b = false;
    for (int r = 1; r <= rounds; ++r) {
        const long t = 10L * r;
        if (device) {
            REQUIRE(log.acts.at(i).first == t);
            CHECK(log.acts.at(i).second == "device");   // hardware first
            ++i;
        }
        const auto want = by_key(full, t);
        for (const auto& w : want) {
            REQUIRE(log.acts.at(i).first == t);
            CHECK(log.acts.at(i).second == w);
            ++i;
        }
        (want.front() == "a" ? first_a : first_b) = true;
    }
    CHECK(i == log.acts.size());
    // No program wins every tie (the keys change with the time).
    CHECK(first_a);
    CHECK(first_b);
}

}   // namespace

TEST_CASE("programs of one node act at an instant in the order of their keys, made a then b") {
    Log log;
    Device d("device", log, 20);
    Program a("a", log, "node0", 20), b("b", log, "node0", 20);
    sc_start();
    check_order(log, {"a", "b"}, 20, true);
    CHECK(software_turns::ties() == 21);   // at the start too (both enter at 0)
}

TEST_CASE("the same made b then a: the same order") {
    Log log;
    Program b("b", log, "node0", 20), a("a", log, "node0", 20);
    Device d("device", log, 20);
    sc_start();
    check_order(log, {"a", "b"}, 20, true);
}

TEST_CASE("a program that wakes again at the instant goes after those waiting") {
    Log log;
    Program a("a", log, "node0", 8, true), b("b", log, "node0", 8, true);
    sc_start();
    REQUIRE(log.acts.size() == 32);
    for (int r = 1; r <= 8; ++r) {
        const auto want = by_key({"a", "b"}, 10L * r);
        const std::size_t at = static_cast<std::size_t>(r - 1) * 4;
        // Both act once before either acts again.
        CHECK(log.acts[at].second == want[0]);
        CHECK(log.acts[at + 1].second == want[1]);
        CHECK(log.acts[at + 2].second.back() == '\'');
        CHECK(log.acts[at + 3].second.back() == '\'');
    }
}

TEST_CASE("programs of different nodes do not wait for each other") {
    Log log;
    Program a("a", log, "node0", 3), b("b", log, "node1", 3);
    sc_start();
    CHECK(log.acts.size() == 6);
    CHECK(software_turns::ties() == 0);   // one waiting per group at each instant
    CHECK(software_turns::turns() == 8);   // two at the start, two an instant
}

TEST_CASE("entering outside a thread, or twice, is refused") {
    CHECK_THROWS_WITH(software_turns::enter("node0"), Catch::Contains("outside a thread"));
}
