#include "models/interconnect/wire_calendar.hpp"

#include <algorithm>
#include <iterator>

namespace vrdmasim {

using sc_core::sc_time;

void WireCalendar::compact() {
    r_.erase(r_.begin(), r_.begin() + static_cast<std::ptrdiff_t>(first_));
    first_ = 0;
}

void WireCalendar::insert(sc_time start, sc_time end) {
    // Sorted by start: from the back. A block it touches takes it in.
    auto it = r_.end();
    const auto first = r_.begin() + static_cast<std::ptrdiff_t>(first_);
    while (it != first && std::prev(it)->first > start) --it;
    const bool joins_prev = !exact_ && it != first && std::prev(it)->second == start;
    const bool joins_next = !exact_ && it != r_.end() && it->first == end;
    if (joins_prev && joins_next) {
        std::prev(it)->second = it->second;
        r_.erase(it);
    } else if (joins_prev) {
        std::prev(it)->second = end;
    } else if (joins_next) {
        it->first = start;
    } else {
        r_.insert(it, {start, end});
    }
}

sc_time WireCalendar::gap_among(sc_time from, sc_time ser_time, sc_time min_end_time) const {
    // (The times as locals: an sc_time, copied by a constructor of its own,
    // comes by reference, and each change of `s` would be a store.)
    sc_time s = from;
    const sc_time ser = ser_time, min_end = min_end_time;
    // The first reservation starting after s, searched from the back: a
    // packet's head usually comes after most reservations' starts.
    const auto first = r_.begin() + static_cast<std::ptrdiff_t>(first_);
    auto it = r_.end();
    while (it != first && std::prev(it)->first > s) --it;
    if (it != first) {
        const auto prev = std::prev(it);
        if (prev->second > s) s = prev->second;
    }
    for (; it != r_.end(); ++it) {
        const sc_time end = std::max(s + ser, min_end);
        if (it->first >= end) break;   // fits before the next reservation
        s = std::max(s, it->second);
    }
    return s;
}

}   // namespace vrdmasim
