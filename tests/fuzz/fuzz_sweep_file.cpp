// Fuzz target: a sweep file (plan_sweep: the INI reader, value lists,
// quoting, [sweep] keys, base configs). Property: refused with ConfigError
// or planned, and a plan's points are distinct and each a full assignment
// of the swept keys.
#include <set>

#include "src/tools/sweep.hpp"
#include "fuzz_target.hpp"

VRDMASIM_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vrdmasim;
    SweepPlan plan;
    try {
        plan = plan_sweep(vrdmasim_fuzz::registry(), vrdmasim_fuzz::scratch_file(data, size, ".sweep.ini"));
    } catch (const ConfigError&) {
        return 0;
    }
    std::set<std::string> ids;
    for (const auto& p : plan.points) {
        if (!ids.insert(p.id).second) vrdmasim_fuzz::broken("point id " + p.id + " twice");
        if (p.assignment.size() != plan.points.front().assignment.size())
            vrdmasim_fuzz::broken("points assign different numbers of keys");
    }
    return 0;
}
