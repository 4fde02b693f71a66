// NetVM's network interface (ni.translation = shadow) through the whole
// System: the engine translated by the NI's shadow page table, which the OS
// keeps up to date; misses served by the kernel; pages locked while the NI
// accesses them; NetVM's sender credits bounding the system buffer. In every
// fault situation the strategies are tested in (tests/system/strategy_test.cpp:
// cold buffers, swap-out, THP collapse, migration by compaction), terminate
// semantics only (a miss always ends the access: there is no stall mode),
// for netvm and pin-static, every byte verified; then the properties:
// reclaim skipped a locked page, credits never exceeded, every OS update
// charged, configs refused.
//
// The agents that push pages out, drive khugepaged and compact are
// tests/fault_situations.hpp's, as strategy_test.cpp runs them.
// One simulation per TEST_CASE (SystemC allows one elaboration per process).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "fault_situations.hpp"
#include "src/sim/invariants.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr std::uint64_t kKiB = 1024;

using situations::lock_records;
using situations::Situation;
using situations::wait_first_post;
using situations::wait_until;

// The run's invariants (src/sim/invariants.cpp), with the run's own figures.
std::vector<Violation> invariants(SystemSim& s) { return check_invariants(*s.sys, s.stats, run_figures(*s.sys)); }

// Every OS update of the table was charged: the table's own count of
// entries written and cleared equals the pager's, and the cores spent
// exactly updates x ni.shadow-update (250 ns) on them.
void check_updates_charged(SystemSim& s) {
    for (unsigned n = 0; n < 2; ++n) {
        Node& node = s.sys->node(n);
        REQUIRE(node.shadow_table);
        const std::uint64_t updates = s.counter(node.group + ".ni.shadow_updates");
        CHECK(updates == node.shadow_table->sets() + node.shadow_table->clears());
        CHECK(updates > 0);   // the buffers were mapped: their entries written
        CHECK(s.scalar(node.group + ".cpu.ni-shadow-update.busy_time") ==
              Approx(static_cast<double>(updates) * 0.25).epsilon(1e-9));
        CHECK(s.scalar(node.group + ".ni.shadow_update_time") ==
              Approx(static_cast<double>(updates) * 0.25).epsilon(1e-9));
    }
}

void shadow_case(const std::string& strategy, Situation sit) {
    const bool netvm = strategy == "netvm";
    // The matrix's stream (tests/fault_situations.hpp) through the shadow NI.
    const situations::Stream st = situations::stream(strategy, sit);
    const std::uint64_t total = st.total, count = st.count;
    SystemSim s(SystemSim::Defaults{{{"ni.translation", "shadow"}}}, st.settings);
    // strategy_test.cpp's agents: swap 20 rounds with the sender's records
    // locked, the buffer pages that changed frame under compaction counted.
    situations::Effect effect;
    situations::Options opt;
    opt.swap_rounds = 20;
    opt.before_swapping = [&s] { lock_records(s); };
    opt.track_moves = true;
    const auto agent = situations::start(s, sit, {0, 1}, effect, opt);
    s.run();
    if (std::getenv("VRDMASIM_TEST_STATS")) s.stats.write_text(std::cerr);
    s.check_all_verified(count, total);
    // No SMMU on the engine's path.
    CHECK_FALSE(s.sys->node(0).smmu);
    CHECK(s.counter("node0.ni.shadow_lookups") > 0);
    check_updates_charged(s);
    const std::uint64_t misses = s.counter("node0.ni.shadow_misses") + s.counter("node1.ni.shadow_misses");
    const auto violations = invariants(s);
    INFO(describe(violations));
    CHECK(violations.empty());
    if (netvm) {
        // NetVM's credits: spent by every data packet, the buffer never full.
        CHECK(s.counter("node0.dma.credits_spent") == total);
        CHECK(s.counter("node1.dma.netvm_full") == 0);
        CHECK(s.scalar("node1.dma.netvm_peak") <= 2.0 * 64 * kKiB);   // 2 senders x ni.credits
    }
    switch (sit) {
    case Situation::Cold:
        if (netvm) {
            CHECK(s.counter("node0.ni.shadow_misses") > 0);   // source pages never touched
            CHECK(s.counter("node1.ni.shadow_misses") > 0);   // destination pages never touched
            CHECK(s.counter("node0.dma.parks") > 0);
            CHECK(s.counter("node1.dma.netvm_buffered") > 0);
            CHECK(s.counter("node1.ni.misses_handled") > 0);
        } else {
            CHECK(misses == 0);   // pinned whole, their entries written when pinned
        }
        break;
    case Situation::Swap:
        if (netvm) {
            CHECK(s.counter("node0.vm.swap_outs") + s.counter("node1.vm.swap_outs") > 0);
            CHECK(s.counter("node0.ni.shadow_removals") + s.counter("node1.ni.shadow_removals") > 0);
        } else {
            CHECK(misses == 0);
        }
        break;
    case Situation::Thp:
        if (netvm) CHECK(s.counter("node0.vm.collapses") + s.counter("node1.vm.collapses") > 0);
        else CHECK(s.counter("node0.vm.collapse_skipped_pinned") + s.counter("node1.vm.collapse_skipped_pinned") > 0);
        break;
    case Situation::Migrate:
        if (netvm) {
            CHECK(s.counter("node0.vm.pages_migrated") + s.counter("node1.vm.pages_migrated") > 0);
            CHECK(effect.pages_moved > 0);
        } else {
            CHECK(misses == 0);
        }
        break;
    }
}

}   // namespace

#define SHADOW_CASE(strategy, sit)                                                      \
    TEST_CASE("shadow " strategy " / " #sit ": every byte arrives right", "[shadow]") { \
        shadow_case(strategy, Situation::sit);                                          \
    }
SHADOW_CASE("netvm", Cold)
SHADOW_CASE("netvm", Swap)
SHADOW_CASE("netvm", Thp)
SHADOW_CASE("netvm", Migrate)
SHADOW_CASE("pin-static", Cold)
SHADOW_CASE("pin-static", Swap)
SHADOW_CASE("pin-static", Thp)
SHADOW_CASE("pin-static", Migrate)

// Credits never exceeded: with ni.credits = 1 KiB (four packets) a cold
// NetVM stream makes senders wait for credit packets, the receiver's system
// buffer never holds more than the credits it granted (2 senders x 1 KiB)
// and is never full, and every credit spent came back or is owed.
TEST_CASE("shadow netvm: a sender without credits waits and the system buffer never exceeds the credits granted",
          "[shadow][credits]") {
    SystemSim s({{"ni.translation", "shadow"},
                 {"rdma.strategy", "netvm"},
                 {"ni.credits", "1KiB"},
                 {"dma.netvm-buffer", "16KiB"},
                 {"workload.total-bytes", "512KiB"},
                 {"workload.message-size", "64KiB"},
                 {"workload.buffers", "8"},
                 {"workload.populate", "false"},
                 {"workload.fill-source", "false"},
                 {"vm.thp", "never"},
                 {"sim.time-limit", "200ms"}});
    s.run();
    REQUIRE(s.finished());
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.log().bytes_verified.value() == 512 * kKiB);
    CHECK(s.counter("node1.dma.netvm_buffered") > 0);   // misses went to the system buffer
    CHECK(s.counter("node0.dma.credit_waits") > 0);   // and the sender ran out of credit
    CHECK(s.scalar("node0.dma.credit_wait") > 0);
    CHECK(s.counter("node1.dma.credit_packets") > 0);
    CHECK(s.counter("node1.dma.netvm_full") == 0);
    CHECK(s.scalar("node1.dma.netvm_peak") <= 2.0 * 1024);
    CHECK(s.counter("node0.dma.credits_spent") == 512 * kKiB);
    CHECK(static_cast<double>(s.counter("node0.dma.credits_returned")) + s.scalar("node1.dma.credits_owed") ==
          static_cast<double>(512 * kKiB));
    const auto violations = invariants(s);
    INFO(describe(violations));
    CHECK(violations.empty());
}

// The page lock seen by reclaim through the whole System: an agent polls
// the NI's table every 50 ns while the stream runs and, the first time the
// NI holds one of the buffers' pages locked at that instant, asks the Vm to
// reclaim more than there is: reclaim skips that page (it stays present)
// although it evicts others.
TEST_CASE("shadow netvm: reclaim skips the page the NI holds locked at that time", "[shadow][lock]") {
    SystemSim s({{"ni.translation", "shadow"},
                 {"rdma.strategy", "netvm"},
                 {"workload.total-bytes", "2MiB"},
                 {"workload.message-size", "256KiB"},
                 {"workload.buffers", "2"},
                 {"vm.thp", "never"},
                 {"sim.time-limit", "200ms"}});
    bool tried = false, kept = false;
    std::uint64_t evicted = 0;
    At agent("reclaimer", SC_ZERO_TIME, [&] {
        if (!wait_first_post(s)) return;
        lock_records(s);
        while (!s.finished() && !tried) {
            for (unsigned n = 0; n < 2 && !tried; ++n) {
                Node& node = s.sys->node(n);
                for (const auto& a : node.app.allocations())
                    for (std::uint64_t va = a.first; va < a.first + a.second && !tried; va += 4096) {
                        if (!node.shadow_table->locked(node.app.pid(), va, sc_time_stamp())) continue;
                        tried = true;
                        const VmResult r = node.vm.reclaim(node.vm.free_bytes() + 64 * 1024 * kKiB, sc_time_stamp());
                        evicted = r.value;
                        kept = node.vm.present(node.app.pid(), va);
                        wait_until(r.done);
                    }
            }
            wait(50, SC_NS);
        }
    });
    s.run();
    if (std::getenv("VRDMASIM_TEST_STATS")) s.stats.write_text(std::cerr);
    REQUIRE(s.finished());
    CHECK(s.log().errors.value() == 0);
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.log().bytes_verified.value() == 2048 * kKiB);
    REQUIRE(tried);
    CHECK(evicted > 0);   // reclaim evicted other pages
    CHECK(kept);   // but not the one the NI was accessing
    CHECK(s.counter("node0.vm.reclaim_skipped_locked") + s.counter("node1.vm.reclaim_skipped_locked") > 0);
}

TEST_CASE("shadow: configs the NI cannot run are refused and the keys named", "[shadow][config]") {
    auto refused = [](const Settings& set, const std::string& key) {
        Settings all{{"ni.translation", "shadow"}};
        all.insert(all.end(), set.begin(), set.end());
        try {
            SystemSim s(all);
        } catch (const ConfigError& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(key) != std::string::npos);
            return true;
        }
        return false;
    };
    CHECK(refused({{"rdma.strategy", "netvm"}, {"ni.credits", "256KiB"}}, "dma.netvm-buffer"));
    CHECK(refused({{"rdma.strategy", "netvm"}, {"ni.credits", "512B"}, {"dma.packet-size", "512B"}}, "ni.credits"));
    CHECK(refused({{"smmu.enabled", "false"}}, "smmu.enabled"));
    CHECK(refused({{"smmu-driver.fault-mode", "stall"}, {"dma.fault-tolerant", "false"}}, "smmu-driver.fault-mode"));
}

// The figure docs/dma.md quotes from configs/netvm/latency.ini at
// 64 B: with resident pages, not pinning (netvm) costs what static pinning
// costs, 1.294 us through the shadow table (the SMMU path: 1.195 us).
TEST_CASE("shadow pingpong 64 B with resident pages: netvm's latency is the README's 1.294 us", "[shadow][figure]") {
    SystemSim s({{"ni.translation", "shadow"},
                 {"rdma.strategy", "netvm"},
                 {"workload.kind", "pingpong"},
                 {"workload.message-size", "64B"},
                 {"workload.iterations", "200"}});
    s.run();
    REQUIRE(s.finished());
    CHECK(s.log().mismatches.value() == 0);
    CHECK(s.counter("node0.ni.shadow_misses") + s.counter("node1.ni.shadow_misses") == 0);
    CHECK(s.log().latency_us.quantile(0.5) == Approx(1.29417).epsilon(1e-4));
}
