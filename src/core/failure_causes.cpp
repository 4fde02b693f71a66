#include "src/core/failure_causes.hpp"

#include <algorithm>
#include <utility>

namespace vrdmasim::failure_causes {
namespace {

std::vector<std::pair<int, Explainer>>& declared() {
    static std::vector<std::pair<int, Explainer>> v;   // made at its first use: any order of initialisation
    return v;
}

}   // namespace

Declare::Declare(int order, Explainer f) {
    auto& v = declared();
    v.emplace_back(order, std::move(f));
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::vector<std::string> explain(const Config& cfg, const StatRegistry& stats) {
    std::vector<std::string> why;
    for (const auto& [order, f] : declared())
        if (std::string s = f(cfg, stats); !s.empty()) why.push_back(std::move(s));
    return why;
}

}   // namespace vrdmasim::failure_causes
