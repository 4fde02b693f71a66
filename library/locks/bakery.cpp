#include "library/locks/bakery.hpp"

#include <algorithm>

namespace vrdmasim {

std::vector<std::uint64_t> BakeryLock::initial_words() const {
    return std::vector<std::uint64_t>(first_ + 2 * site_.processes, 0);
}

void BakeryLock::acquire(RemoteMemory& rm, unsigned me) {
    const unsigned n = site_.processes, home = site_.home;
    rm.put(home, choosing(me), 1);
    std::uint64_t max = 0;
    for (unsigned j = 0; j < n; ++j)
        if (j != me) max = std::max(max, rm.get(home, number(j)));
    const std::uint64_t mine = max + 1;
    rm.put(home, number(me), mine);
    rm.put(home, choosing(me), 0);
    for (unsigned j = 0; j < n; ++j) {
        if (j == me) continue;
        Backoff b;
        while (rm.get(home, choosing(j)) != 0) b.wait(rm.app(), site_);
        for (;;) {
            const std::uint64_t theirs = rm.get(home, number(j));
            if (theirs == 0 || theirs > mine || (theirs == mine && j > me)) break;
            b.wait(rm.app(), site_);
        }
    }
}

void BakeryLock::release(RemoteMemory& rm, unsigned me) { rm.put(site_.home, number(me), 0); }

std::string BakeryLock::check_idle(const std::vector<std::uint64_t>& w) const {
    for (unsigned i = 0; i < 2 * site_.processes; ++i)
        if (w.at(first_ + i) != 0)
            return std::string("bakery ") + (i < site_.processes ? "choosing[" : "number[") +
                   std::to_string(i % site_.processes) + "] is " + std::to_string(w[first_ + i]) + ", not 0";
    return {};
}

}   // namespace vrdmasim
