// Why a run's transfers failed, in the words of the models and libraries
// that count it. Each declares, where it lives, what it can tell from its
// own counters and parameters (a registration refused for RLIMIT_MEMLOCK,
// an SMMU fault the engine cannot survive); the command line asks them all
// and names none of them (issue #58: the command line knows no model).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace vrdmasim {

class Config;
class StatRegistry;

namespace failure_causes {

// What one model or library says of the run's failed transfers: "" if it
// has nothing to say.
using Explainer = std::function<std::string(const Config&, const StatRegistry&)>;

// Declared at static initialisation, in the model's own file: `order` is
// its place among the causes a run lists (lower first).
struct Declare {
    Declare(int order, Explainer f);
};

// Every declared explainer's sentence that is not empty, by order.
std::vector<std::string> explain(const Config& cfg, const StatRegistry& stats);

}   // namespace failure_causes
}   // namespace vrdmasim
