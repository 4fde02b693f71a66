// What every model needs from the simulator: its configuration, the
// statistics registry and the tracer. Passed to model constructors.
#pragma once

#include "core/params.hpp"
#include "core/stats.hpp"
#include "core/trace.hpp"

namespace vrdmasim {

struct SimContext {
    const Config& config;
    StatRegistry& stats;
    Tracer& tracer;
};

// Time helpers shared by models.
inline sc_core::sc_time max_time(const sc_core::sc_time& a, const sc_core::sc_time& b) {
    return a > b ? a : b;
}

}  // namespace vrdmasim
