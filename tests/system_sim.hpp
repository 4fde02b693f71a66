// The whole system as `vrdmasim run` builds it, for tests: configuration,
// statistics, tracer and System in one object. SystemC allows one
// elaboration per process, so one SystemSim per test case (ctest runs each
// case in its own process).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <systemc>

#include "src/sim/invariants.hpp"
#include "src/sim/node.hpp"
#include "src/sim/system.hpp"
#include "src/sim/thread_stacks.hpp"

namespace vrdmasim {

using Settings = std::vector<std::pair<std::string, std::string>>;

// `a`'s settings, then `b`'s (a later one wins, as on the command line).
inline Settings operator+(Settings a, const Settings& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Two QFDBs in a row: nodes 0-3 on board 0, 4-7 on board 1.
inline const Settings kTwoBoards{{"topology.kind", "torus"}, {"topology.x", "2"}};

struct SystemSim {
    ParamRegistry reg;
    std::unique_ptr<Config> cfg;
    StatRegistry stats;
    Tracer tracer;
    std::unique_ptr<SimContext> ctx;
    std::unique_ptr<System> sys;
    explicit SystemSim(const Settings& s) : SystemSim(Defaults{}, s) {}
    // A test file's common settings first, then the case's: a layer over
    // them (Config::layer), as a config file under the command line.
    struct Defaults {
        Settings settings;
    };
    SystemSim(const Defaults& defaults, const Settings& s) {
        declare_all_params(reg);
        cfg = std::make_unique<Config>(reg);
        for (const auto& kv : defaults.settings) cfg->set(kv.first, kv.second, "test defaults");
        for (const auto& kv : s) cfg->set(kv.first, kv.second, "test");
        System::resolve(*cfg);
        ctx = std::make_unique<SimContext>(SimContext{*cfg, stats, tracer});
        sys = std::make_unique<System>(*ctx);
    }
    // The run's self-checks as `vrdmasim run` makes them at its end, with
    // the figures it computes (the summary's link utilisation, which
    // run_figures does not compute, a plausible 0.5).
    std::vector<Violation> self_check() {
        RunFigures f = run_figures(*sys);
        f.link_util_max = 0.5;
        return check_invariants(*sys, stats, f);
    }
    // To the end, as `vrdmasim run`, whose threads must not have overflowed
    // their stacks (src/sim/thread_stacks.hpp).
    void run() {
        sc_core::sc_start(sys->time_limit(), sc_core::SC_EXIT_ON_STARVATION);
        CHECK(thread_stacks::check().empty());
    }
    TransferLog& log() { return sys->workload().log(); }
    bool finished() { return sys->workload().finished(); }
    // A counter that must exist.
    std::uint64_t counter(const std::string& name) const {
        const Counter* c = stats.find_counter(name);
        INFO("counter " << name);
        REQUIRE(c != nullptr);
        return c->value();
    }
    // A scalar, 0 if never registered (CPU activities appear on first use).
    double scalar(const std::string& name) const {
        const Scalar* x = stats.find_scalar(name);
        return x ? x->value() : 0.0;
    }
    // Every transfer finished (`transfers` of them), none failed, every
    // byte delivered (`bytes`) and checked equal.
    void check_all_verified(std::uint64_t transfers, std::uint64_t bytes) {
        REQUIRE(finished());
        CHECK(log().transfers.value() == transfers);
        CHECK(log().errors.value() == 0);
        CHECK(log().mismatches.value() == 0);
        CHECK(log().bytes_delivered.value() == bytes);
        CHECK(log().bytes_verified.value() == bytes);
    }
    // The SMMU faults (context bank 0, reads and writes) of node `node`
    // ("node1", or a torus's coordinate name).
    std::uint64_t smmu_faults(const std::string& node) const {
        const std::string p = node + ".smmu.cb0.";
        return counter(p + "faults_read") + counter(p + "faults_write");
    }
    std::uint64_t smmu_faults(unsigned node) const { return smmu_faults("node" + std::to_string(node)); }
    // What node `node`'s application has pinned now.
    std::uint64_t pinned_bytes(unsigned node) {
        Node& n = sys->node(node);
        return n.vm.pinned_bytes(n.app.pid());
    }
};

// The message of the ConfigError that building the System with `set`
// raises; empty if it builds. (System::resolve's own refusals propagate.)
inline std::string config_refusal(const Settings& set) {
    ParamRegistry reg;
    declare_all_params(reg);
    Config cfg(reg);
    for (const auto& kv : set) cfg.set(kv.first, kv.second, "test");
    System::resolve(cfg);
    StatRegistry stats;
    Tracer tracer;
    SimContext ctx{cfg, stats, tracer};
    try {
        System sys(ctx);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

// Runs `action` once at simulated time `at`, in its own thread (it may wait).
struct At : sc_core::sc_module {
    sc_core::sc_time at;
    std::function<void()> action;
    At(sc_core::sc_module_name n, sc_core::sc_time t, std::function<void()> a)
        : sc_module(n), at(t), action(std::move(a)) {
        SC_HAS_PROCESS(At);
        SC_THREAD(run);
    }
    void run() {
        sc_core::wait(at);
        action();
    }
};

// The error of building (not running) a system of `s`, "" if it builds.
inline std::string build_refusal(const Settings& s) {
    try {
        SystemSim sim(s);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}   // namespace vrdmasim
