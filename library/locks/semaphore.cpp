#include "library/locks/semaphore.hpp"

#include <stdexcept>

namespace vrdmasim {

namespace {
constexpr std::uint64_t kMinusOne = ~std::uint64_t(0);   // adding 2^64 - 1 subtracts 1
}

void AtomicSemaphore::acquire(RemoteMemory& rm, unsigned) {
    Backoff b;
    for (;;) {
        const auto old = static_cast<std::int64_t>(rm.atomic(AtomicOp::FetchAdd, site_.home, site_.word(0), kMinusOne));
        if (old > 0) return;
        rm.atomic(AtomicOp::FetchAdd, site_.home, site_.word(0), 1);   // none free: undo and wait
        b.wait(rm.app(), site_);
    }
}

void AtomicSemaphore::release(RemoteMemory& rm, unsigned) {
    const auto old = static_cast<std::int64_t>(rm.atomic(AtomicOp::FetchAdd, site_.home, site_.word(0), 1));
    if (old >= static_cast<std::int64_t>(site_.count))
        throw std::runtime_error(rm.app().group() + ": semaphore released beyond its count");
}

std::string AtomicSemaphore::check_idle(const std::vector<std::uint64_t>& w) const {
    return w.at(0) == site_.count ? std::string()
                                  : "semaphore is " + std::to_string(static_cast<std::int64_t>(w[0])) + ", not " +
                                        std::to_string(site_.count);
}

}   // namespace vrdmasim
