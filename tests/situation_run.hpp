// One whole-system run in a fault situation (fault_situations.hpp), in a
// child process, and what it shows: whether it ran clean and whether the
// situation happened. Shared by the collective and trace-replay tests.
#pragma once

#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "child_process.hpp"
#include "fault_situations.hpp"
#include "src/sim/invariants.hpp"

namespace vrdmasim {
namespace situations {

// `set` (with the situation's own settings added) run with the agent of
// `sit` on `nodes`: "clean" is 1 when the run finished, no self-check was
// violated, no transfer failed or mismatched and `verified` accepts the
// log; then the counts that show the situation.
inline std::map<std::string, double> run_in(Settings set, Situation sit, std::vector<unsigned> nodes,
                                            std::function<bool(const TransferLog&)> verified) {
    return in_child_figures([&] {
        for (const auto& kv : settings(sit)) set.push_back(kv);
        SystemSim sim(set);
        Effect effect;
        Options opt;
        opt.swap_rounds = 20;
        opt.thp_advise_after = sc_core::sc_time(20, sc_core::SC_US);
        const auto agent = start(sim, sit, nodes, effect, opt);
        sim.run();
        const TransferLog& l = sim.log();
        const auto v = sim.self_check();
        if (!v.empty()) std::cerr << describe(v) << "\n";
        std::ostringstream os;
        os << "clean "
           << (sim.finished() && v.empty() && l.errors.value() == 0 && l.mismatches.value() == 0 && verified(l))
           << "\n";
        os << "swap_outs " << sim.stats.sum_counters("vm.swap_outs") << "\n";
        os << "collapses " << sim.stats.sum_counters("vm.collapses") << "\n";
        os << "migrated " << sim.stats.sum_counters("vm.pages_migrated") << "\n";
        os << "faults " << sim.stats.sum_counters("smmu.tbu0.faults") + sim.stats.sum_counters("vm.faults_minor")
           << "\n";
        return os.str();
    });
}

// The run was clean and the situation happened.
inline void check_clean_run(const std::map<std::string, double>& f, Situation sit) {
    REQUIRE(f.count("clean"));
    CHECK(f.at("clean") == 1);
    switch (sit) {
    case Situation::Cold: CHECK(f.at("faults") > 0); break;
    case Situation::Swap: CHECK(f.at("swap_outs") > 0); break;
    case Situation::Thp: CHECK(f.at("collapses") > 0); break;
    case Situation::Migrate: CHECK(f.at("migrated") > 0); break;
    }
}

}   // namespace situations
}   // namespace vrdmasim
