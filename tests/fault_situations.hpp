// The VM's fault situations, made to happen under a running workload on any
// set of nodes: cold buffers (settings only), swap-out (reclaim), THP
// collapse (khugepaged) and migration (compaction). Each agent starts once
// the workload has posted its first transfer and stops when every workload
// has finished.
// The one home of these agents: tests/system/strategy_test.cpp (the original
// two-node matrix), shadow_system_test.cpp, physical_test.cpp,
// sendrecv_test.cpp, procs_test.cpp (two processes a node) and
// arrivals_test.cpp run them, each with the Options its situations need.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
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

// Whether every workload (one per process, node.processes) has finished.
inline bool all_finished(SystemSim& sim) {
    for (const auto& w : sim.sys->workloads())
        if (!w->finished()) return false;
    return true;
}

// Waits until the first message has been posted (buffers mapped, transfers
// about to run); false if the workloads finished first.
inline bool wait_first_post(SystemSim& sim) {
    while (sim.log().first_post == sc_core::sc_max_time()) {
        if (all_finished(sim)) return false;
        sc_core::wait(5, sc_core::SC_US);
    }
    return true;
}

// mlock the sender's completion records (its allocations after the source
// buffers). The library locks them itself (RdmaProcess::alloc_locked); this makes
// sure, whatever the library does, that the swap situations put their
// pressure on the buffers.
inline void lock_records(SystemSim& sim, unsigned sender = 0) {
    Node& n = sim.sys->node(sender);
    const auto& al = n.app.allocations();
    for (std::size_t i = 1; i < al.size(); ++i)
        REQUIRE(n.vm.mlock(n.app.pid(), al[i].first, al[i].second, sc_core::sc_time_stamp()).ok());
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

// The stream strategy_test.cpp's matrix meets the situations with: 1 MiB in
// 8 messages of 128 KiB (THP: 2 MiB in 8 of 256 KiB, so that the buffers
// are whole 2 MiB ranges), window 2, a buffer of its own per message, under
// `strategy`; `settings` holds those and the situation's own.
struct Stream {
    std::uint64_t total = 0, msg = 0, count = 0;
    Settings settings;
};
inline Stream stream(const std::string& strategy, Situation s) {
    Stream out;
    out.total = 1024 * 1024, out.msg = 128 * 1024;
    if (s == Situation::Thp) out.total = 2048 * 1024, out.msg = 256 * 1024;
    out.count = out.total / out.msg;
    out.settings = {{"rdma.strategy", strategy},
                    {"workload.total-bytes", std::to_string(out.total)},
                    {"workload.message-size", std::to_string(out.msg)},
                    {"workload.window", "2"},
                    {"workload.buffers", std::to_string(out.count)},
                    {"vm.memlock-limit", "64MiB"},
                    {"sim.time-limit", "200ms"}};
    for (const auto& kv : settings(s)) out.settings.push_back(kv);
    return out;
}

// What the agent did, for the test to check the situation happened.
struct Effect {
    std::uint64_t rounds = 0;   // swap / THP / compaction passes made
    std::uint64_t pages_moved = 0;   // Migrate with Options::track_moves
};

// Where a test's agent differs from the default one.
struct Options {
    // Swap: rounds at most (so that a run that cannot finish under the
    // pressure still ends).
    int swap_rounds = 40;
    // Swap: run once transfers run, before the first round (lock_records,
    // say).
    std::function<void()> before_swapping;
    // Swap: run after each node's reclaim, with that node's Vm and its index
    // in `nodes`.
    std::function<void(Vm&, std::size_t)> after_reclaim;
    // Thp: the wait between the first post and the advice.
    sc_core::sc_time thp_advise_after{50, sc_core::SC_US};
    // Migrate: count the pages of the application's allocations that changed
    // frame, looked at before the first pass and after each
    // (Effect::pages_moved).
    bool track_moves = false;
};

// Starts the agent of `s` on `nodes` of `sim` (none for Cold), acting on
// every process of those nodes until every workload has finished. Keep the
// returned module alive until the simulation ends.
inline std::unique_ptr<At> start(SystemSim& sim, Situation s, std::vector<unsigned> nodes, Effect& effect,
                                 Options opt = {}) {
    using namespace sc_core;
    auto first_post = [&sim]() { return wait_first_post(sim); };
    auto finished = [&sim]() { return all_finished(sim); };
    switch (s) {
    case Situation::Cold: return nullptr;
    case Situation::Swap:
        // Every node pushes 128 KiB of its pages out every 100 us
        // (opt.swap_rounds times at most).
        return std::make_unique<At>("swapper", SC_ZERO_TIME, [&sim, nodes, &effect, opt, first_post, finished] {
            if (!first_post()) return;
            if (opt.before_swapping) opt.before_swapping();
            for (int round = 0; round < opt.swap_rounds && !finished(); ++round) {
                for (std::size_t i = 0; i < nodes.size(); ++i) {
                    Vm& vm = sim.sys->node(nodes[i]).vm;
                    wait_until(vm.reclaim(vm.free_bytes() + 128 * 1024, sc_time_stamp()).done);
                    if (opt.after_reclaim) opt.after_reclaim(vm, i);
                }
                ++effect.rounds;
                wait(100, SC_US);
            }
        });
    case Situation::Thp:
        // The buffers are 4 KiB pages (thp = madvise, not advised when
        // mapped). Once transfers run (and opt.thp_advise_after more), every
        // allocation is advised MADV_HUGEPAGE and khugepaged passes run every
        // 50 us, each collapse's window (PTEs cleared until the block is
        // installed) open in simulated time.
        return std::make_unique<At>("khugepaged", SC_ZERO_TIME, [&sim, nodes, &effect, opt, first_post, finished] {
            if (!first_post()) return;
            wait(opt.thp_advise_after);
            for (unsigned n : nodes) {
                Node& node = sim.sys->node(n);
                for (unsigned p = 0; p < node.processes(); ++p)
                    for (const auto& a : node.process(p).allocations())
                        REQUIRE(node.vm
                                    .madvise(node.process(p).pid(), a.first, (a.second + 4095) / 4096 * 4096,
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
        // Compaction moves pages only out of a 2 MiB physical block that
        // holds no page table, and populating memory in order puts a table
        // in nearly every block. So first, before the application maps its
        // buffers, a filler process on each node populates 1.5 MiB: the
        // buffers' pages then run over into the next block, which holds none
        // of their tables. Then every node compacts every 20 us, each
        // migration window (PTEs replaced by migration entries, SMMU
        // invalidated, bytes copied, new frames mapped) open in simulated
        // time.
        return std::make_unique<At>("compactor", SC_ZERO_TIME, [&sim, nodes, &effect, opt, first_post, finished] {
            for (unsigned n : nodes) {
                Vm& vm = sim.sys->node(n).vm;
                const int filler = vm.create_process("filler");
                REQUIRE(vm.mmap(filler, 1536 * 1024, Prot::ReadWrite, true, sc_time_stamp()).ok());
            }
            if (!first_post()) return;
            std::map<std::tuple<unsigned, unsigned, std::uint64_t>, std::uint64_t> frame;   // (node, process, page)
            auto look = [&] {
                if (!opt.track_moves) return;
                for (unsigned n : nodes) {
                    Node& node = sim.sys->node(n);
                    for (unsigned p = 0; p < node.processes(); ++p)
                        for (const auto& a : node.process(p).allocations())
                            for (std::uint64_t va = a.first; va < a.first + a.second; va += 4096) {
                                std::uint64_t pa = 0;
                                if (!node.vm.translate(node.process(p).pid(), va, pa)) continue;
                                auto it = frame.find({n, p, va});
                                if (it != frame.end() && it->second != pa) ++effect.pages_moved;
                                frame[{n, p, va}] = pa;
                            }
                }
            };
            look();
            while (!finished()) {
                for (unsigned n : nodes) {
                    Vm& vm = sim.sys->node(n).vm;
                    wait_until(vm.compact_begin(512, sc_time_stamp()).done);
                    if (vm.migrating().open) wait_until(vm.compact_end(sc_time_stamp()).done);
                }
                look();
                ++effect.rounds;
                wait(20, SC_US);
            }
        });
    }
    return nullptr;
}

}   // namespace situations
}   // namespace vrdmasim
