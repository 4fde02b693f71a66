// The environment of a model's test bench, for every model test: the
// parameters of the models under test (their declare_params), a
// configuration with the file's and the case's settings, statistics, a
// tracer and the SimContext models are built with. A model test links its
// model's library, not the simulator; the whole System, for system tests, is
// tests/system_sim.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "src/core/context.hpp"

namespace vrdmasim_test {

using Settings = std::vector<std::pair<std::string, std::string>>;
// The declare_params of the models a bench builds, e.g. {Bus::declare_params, Dram::declare_params}.
using ParamDecls = std::vector<void (*)(vrdmasim::ParamRegistry&)>;

inline vrdmasim::ParamRegistry params_of(const ParamDecls& decls) {
    vrdmasim::ParamRegistry reg;
    for (auto declare : decls) declare(reg);
    return reg;
}

struct ModelEnv {
    vrdmasim::ParamRegistry reg;
    vrdmasim::Config cfg;
    vrdmasim::StatRegistry stats;
    vrdmasim::Tracer tracer;
    vrdmasim::SimContext ctx;

    // `defaults`: the test file's settings; `settings`: the case's, after them.
    explicit ModelEnv(const ParamDecls& decls, const Settings& defaults = {}, const Settings& settings = {})
        : reg(params_of(decls)), cfg(reg), ctx{cfg, stats, tracer} {
        set(defaults);
        set(settings);
    }
    void set(const Settings& settings) {
        for (const auto& kv : settings) cfg.set(kv.first, kv.second, "test");
    }

    // Statistics that must exist.
    std::uint64_t counter(const std::string& name) const {
        const vrdmasim::Counter* c = stats.find_counter(name);
        INFO("counter " << name);
        REQUIRE(c);
        return c->value();
    }
    double scalar(const std::string& name) const {
        const vrdmasim::Scalar* s = stats.find_scalar(name);
        INFO("scalar " << name);
        REQUIRE(s);
        return s->value();
    }
    const vrdmasim::Histogram& histogram(const std::string& name) const {
        const vrdmasim::Histogram* h = stats.find_histogram(name);
        INFO("histogram " << name);
        REQUIRE(h);
        return *h;
    }
};

}   // namespace vrdmasim_test
