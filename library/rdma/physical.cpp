#include "library/rdma/physical.hpp"

#include <algorithm>

#include "models/smmu/smmu500.hpp"
#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

bool physical_mode(const Config& c) {
    if (c[params_of<SmmuParams>().enabled]) return false;
    return registration_strategies::of(c).makes_present;
}

void PhysicalKeys::publish(unsigned node, int pid, std::uint64_t va_page, std::uint64_t pa_page) {
    auto r = keys_.insert({{node, va_page}, pa_page});
    if (r.second) ++published_[node];
    r.first->second = pa_page;   // registered again: the newest snapshot
    handed(node, pid, va_page, pa_page);
}

bool PhysicalKeys::lookup(unsigned node, std::uint64_t va, std::uint64_t& pa) const {
    auto it = keys_.find({node, va & ~std::uint64_t(4095)});
    if (it == keys_.end()) return false;
    pa = it->second + (va & 4095);
    return true;
}

void PhysicalKeys::handed(unsigned node, int pid, std::uint64_t va_page, std::uint64_t pa_page) {
    if (handed_.size() <= node) handed_.resize(node + 1);
    auto& v = handed_[node][pa_page];
    const std::pair<int, std::uint64_t> e{pid, va_page};
    if (std::find(v.begin(), v.end(), e) == v.end()) v.push_back(e);
}

const std::vector<std::pair<int, std::uint64_t>>* PhysicalKeys::handed_at(unsigned node, std::uint64_t pa_page) const {
    if (node >= handed_.size()) return nullptr;
    auto it = handed_[node].find(pa_page);
    return it == handed_[node].end() ? nullptr : &it->second;
}

std::uint64_t PhysicalKeys::published(unsigned node) const {
    auto it = published_.find(node);
    return it == published_.end() ? 0 : it->second;
}

}   // namespace vrdmasim
