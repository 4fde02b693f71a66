#include "library/locks/plain_semaphore.hpp"

#include <stdexcept>

namespace vrdmasim {

std::vector<std::uint64_t> PlainSemaphore::initial_words() const {
    std::vector<std::uint64_t> w = guard_.initial_words();
    w.at(0) = site_.count;
    return w;
}

void PlainSemaphore::acquire(RemoteMemory& rm, unsigned me) {
    Backoff b;
    for (;;) {
        guard_.acquire(rm, me);
        const std::uint64_t c = rm.get(site_.home, site_.word(0));
        if (c > 0) rm.put(site_.home, site_.word(0), c - 1);
        guard_.release(rm, me);
        if (c > 0) return;
        b.wait(rm.app(), site_);
    }
}

void PlainSemaphore::release(RemoteMemory& rm, unsigned me) {
    guard_.acquire(rm, me);
    const std::uint64_t c = rm.get(site_.home, site_.word(0));
    if (c >= site_.count) throw std::runtime_error(rm.app().group() + ": semaphore released beyond its count");
    rm.put(site_.home, site_.word(0), c + 1);
    guard_.release(rm, me);
}

std::string PlainSemaphore::check_idle(const std::vector<std::uint64_t>& w) const {
    if (w.at(0) != site_.count) return "semaphore is " + std::to_string(w[0]) + ", not " + std::to_string(site_.count);
    return guard_.check_idle(w);
}

}   // namespace vrdmasim
