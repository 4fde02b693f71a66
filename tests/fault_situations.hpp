// The VM's fault situations, made to happen under a running workload on any
// set of nodes: cold buffers (settings only), swap-out (reclaim), THP
// collapse (khugepaged) and migration (compaction). Each agent starts once
// the workload has posted its first transfer and stops when it finishes.
// tests/system/strategy_test.cpp has the original two-node agents these
// generalise.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "system_sim.hpp"

namespace vrdmasim {
namespace situations {

enum class Situation { Cold, Swap, Thp, Migrate };

inline const char* name(Situation s) {
    switch (s) {
    case Situation::Cold: return "cold";
    case Situation::Swap: return "swap";
    case Situation::Thp: return "thp";
    case Situation::Migrate: return "migration";
    }
    return "?";
}

// Waits until a Vm call's work (done at `t`) is over.
inline void wait_until(sc_core::sc_time t) {
    if (t > sc_core::sc_time_stamp()) sc_core::wait(t - sc_core::sc_time_stamp());
}

// The settings a situation needs besides its agent.
inline Settings settings(Situation s) {
    Settings out{{"vm.thp", s == Situation::Thp ? "madvise" : "never"}};
    if (s == Situation::Cold) {
        out.push_back({"workload.populate", "false"});
        out.push_back({"workload.fill-source", "false"});
    }
    return out;
}

// What the agent did, for the test to check the situation happened.
struct Effect {
    std::uint64_t rounds = 0;   // swap / THP / compaction passes made
};

// Starts the agent of `s` on `nodes` of `sim` (none for Cold). Keep the
// returned module alive until the simulation ends.
inline std::unique_ptr<At> start(SystemSim& sim, Situation s, std::vector<unsigned> nodes, Effect& effect) {
    using namespace sc_core;
    auto first_post = [&sim]() {
        while (sim.log().first_post == sc_max_time()) {
            if (sim.sys->workload().finished()) return false;
            wait(5, SC_US);
        }
        return true;
    };
    auto finished = [&sim]() { return sim.sys->workload().finished(); };
    switch (s) {
    case Situation::Cold:
        return nullptr;
    case Situation::Swap:
        // Every node pushes 128 KiB of its pages out every 100 us (40 times at most).
        return std::make_unique<At>("swapper", SC_ZERO_TIME, [&sim, nodes, &effect, first_post, finished] {
            if (!first_post()) return;
            for (int round = 0; round < 40 && !finished(); ++round) {
                for (unsigned n : nodes) {
                    Vm& vm = sim.sys->node(n).vm;
                    wait_until(vm.reclaim(vm.free_bytes() + 128 * 1024, sc_time_stamp()).done);
                }
                ++effect.rounds;
                wait(100, SC_US);
            }
        });
    case Situation::Thp:
        // Advise every allocation MADV_HUGEPAGE once transfers run, then
        // khugepaged passes every 50 us, each collapse's window open in
        // simulated time.
        return std::make_unique<At>("khugepaged", SC_ZERO_TIME, [&sim, nodes, &effect, first_post, finished] {
            if (!first_post()) return;
            wait(50, SC_US);
            for (unsigned n : nodes) {
                Node& node = sim.sys->node(n);
                for (const auto& a : node.app.allocations())
                    REQUIRE(node.vm.madvise(node.app.pid(), a.first, (a.second + 4095) / 4096 * 4096,
                                            Advice::HugePage, sc_time_stamp())
                                .ok());
            }
            while (!finished()) {
                for (unsigned n : nodes) {
                    Vm& vm = sim.sys->node(n).vm;
                    for (;;) {
                        const VmResult r = vm.collapse_begin(sc_time_stamp());
                        wait_until(r.done);
                        if (!vm.collapsing().open) break;
                        wait_until(vm.collapse_end(sc_time_stamp()).done);
                    }
                }
                ++effect.rounds;
                wait(50, SC_US);
            }
        });
    case Situation::Migrate:
        // A filler process populates 1.5 MiB first on each node, so that the
        // workload's pages lie in blocks holding no page table (compaction
        // moves pages only out of such blocks); then every node compacts
        // every 20 us, each migration window open in simulated time.
        return std::make_unique<At>("compactor", SC_ZERO_TIME, [&sim, nodes, &effect, first_post, finished] {
            for (unsigned n : nodes) {
                Vm& vm = sim.sys->node(n).vm;
                const int filler = vm.create_process("filler");
                REQUIRE(vm.mmap(filler, 1536 * 1024, Prot::ReadWrite, true, sc_time_stamp()).ok());
            }
            if (!first_post()) return;
            while (!finished()) {
                for (unsigned n : nodes) {
                    Vm& vm = sim.sys->node(n).vm;
                    wait_until(vm.compact_begin(512, sc_time_stamp()).done);
                    if (vm.migrating().open) wait_until(vm.compact_end(sc_time_stamp()).done);
                }
                ++effect.rounds;
                wait(20, SC_US);
            }
        });
    }
    return nullptr;
}

}  // namespace situations
}  // namespace vrdmasim
