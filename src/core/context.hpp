// What every model needs from the simulator: its configuration, the
// statistics registry and the tracer. Passed to model constructors.
#pragma once

#include <string>

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
    // Where a model may write files of its own into the run's outputs (the
    // output directory being written, published with the rest), once the
    // run has one; "" when it has none (a check, a test, a rank that does
    // not write the outputs). Names must be listed in output_dir.cpp.
    std::string files_dir{};
};

// Time helpers shared by models.
inline sc_core::sc_time max_time(const sc_core::sc_time& a, const sc_core::sc_time& b) { return a > b ? a : b; }

// Durations as plain numbers for statistics, without sc_time's floating
// conversions (the simulator runs at SystemC's default 1 ps resolution,
// checked when the system is built).
inline double to_ns(const sc_core::sc_time& t) { return static_cast<double>(t.value()) * 1e-3; }
inline double to_us(const sc_core::sc_time& t) { return static_cast<double>(t.value()) * 1e-6; }

}   // namespace vrdmasim
