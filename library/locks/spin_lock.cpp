#include "library/locks/spin_lock.hpp"

#include <stdexcept>

namespace vrdmasim {

void SpinLock::acquire(RemoteMemory& rm, unsigned) {
    Backoff b;
    while (rm.atomic(AtomicOp::Swap, site_.home, site_.word(0), 1) != 0) b.wait(rm.app(), site_);
}

void SpinLock::release(RemoteMemory& rm, unsigned) {
    // A swap rather than a plain write: every access to the lock word goes
    // through the home engine's atomic unit, in order, and the old value
    // proves the lock was held.
    if (rm.atomic(AtomicOp::Swap, site_.home, site_.word(0), 0) != 1)
        throw std::runtime_error(rm.app().group() + ": spin lock released while not held");
}

std::string SpinLock::check_idle(const std::vector<std::uint64_t>& w) const {
    return w.at(0) == 0 ? std::string() : "spin lock word is " + std::to_string(w[0]) + ", not 0";
}

}   // namespace vrdmasim
