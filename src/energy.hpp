// The run's energy (models/power) from what its statistics say the system
// did: the activity of every node, link and SSD, gathered here, priced by
// the power model. The summary's energy columns and the energy invariants
// both come from energy_of(), so what is checked is what is printed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "src/core/metrics.hpp"
#include "models/power/power.hpp"

namespace vrdmasim {

class Config;
class StatRegistry;
class System;

struct RunEnergy {
    RunActivity activity;
    Energy energy;
};

// At the end of the simulation, from `stats` gathered over `seconds` of
// simulated time (the whole run's: sc_time_stamp(); a region's).
RunEnergy energy_of(const Config& cfg, System& sys, const StatRegistry& stats, double seconds);

// The summary's energy columns (declared in summary_metrics()).
void declare_energy_metrics(MetricRegistry& reg);
// Their values for a run that delivered `bytes`.
std::vector<std::pair<std::string, std::string>> energy_columns(const RunEnergy& e, double bytes);

// Violations of the energy invariants, as "detail" strings: a component
// below its static power over the run, a negative or non-finite figure, or
// more core time busy than the cores had.
std::vector<std::string> energy_violations(const RunEnergy& e);

}   // namespace vrdmasim
