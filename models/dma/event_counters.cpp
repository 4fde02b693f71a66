// Event counters named by the sender (see event_counters.hpp).
#include "models/dma/event_counters.hpp"

#include <algorithm>

namespace vrdmasim {

using sc_core::sc_time;

void EventCounter::increment_at(sc_time at) {
    ++increments_;
    pending_.insert(std::upper_bound(pending_.begin(), pending_.end(), at), at);
}

void EventCounter::fold(sc_time at) {
    while (!pending_.empty() && pending_.front() <= at) {
        pending_.pop_front();
        ++value_;
    }
}

std::uint64_t EventCounter::value_at(sc_time at) {
    fold(at);
    return value_;
}

void EventCounter::write_at(std::uint64_t v, sc_time at) {
    fold(at);
    value_ = v;
}

std::uint64_t EventCounters::value_at(std::uint32_t i, sc_time at) {
    auto it = counters_.find(i);
    return it == counters_.end() ? 0 : it->second.value_at(at);
}

std::uint64_t EventCounters::increments() const {
    std::uint64_t n = 0;
    for (const auto& [i, c] : counters_) n += c.increments();
    return n;
}

}   // namespace vrdmasim
