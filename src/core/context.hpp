// What every model needs from the simulator: its configuration, the
// statistics registry and the tracer. Passed to model constructors.
#pragma once

#include "src/core/metrics.hpp"
#include "src/core/params.hpp"
#include "src/core/sim_params.hpp"
#include "src/core/stats.hpp"
#include "src/core/trace.hpp"

namespace vrdmasim {

struct SimContext {
    const Config& config;
    StatRegistry& stats;
    Tracer& tracer;
};

// Time helpers shared by models.
inline sc_core::sc_time max_time(const sc_core::sc_time& a, const sc_core::sc_time& b) { return a > b ? a : b; }

// Durations as plain numbers for statistics, without sc_time's floating
// conversions (the simulator runs at SystemC's default 1 ps resolution,
// checked when the system is built).
inline double to_ns(const sc_core::sc_time& t) { return static_cast<double>(t.value()) * 1e-3; }
inline double to_us(const sc_core::sc_time& t) { return static_cast<double>(t.value()) * 1e-6; }

}   // namespace vrdmasim
