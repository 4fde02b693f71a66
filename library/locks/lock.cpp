// The lock factory and the back-off every kind polls with (see lock.hpp).
#include "library/locks/lock.hpp"

#include <algorithm>
#include <stdexcept>

#include "library/locks/bakery.hpp"
#include "library/locks/mcs_lock.hpp"
#include "library/locks/plain_semaphore.hpp"
#include "library/locks/semaphore.hpp"
#include "library/locks/spin_lock.hpp"
#include "library/locks/wait_queue.hpp"

namespace vrdmasim {

void DistributedLock::Backoff::wait(RdmaProcess& app, const LockSite& s) {
    if (next == sc_core::SC_ZERO_TIME) next = s.backoff;
    app.compute(next);
    next = std::min(next * 2.0, s.backoff_max);
}

bool is_semaphore(const std::string& kind) { return kind == "semaphore" || kind == "plain-semaphore"; }

std::unique_ptr<DistributedLock> make_lock(const std::string& kind, const LockSite& site) {
    if (kind == "spin") return std::make_unique<SpinLock>(site);
    if (kind == "mcs") return std::make_unique<McsLock>(site);
    if (kind == "semaphore") return std::make_unique<AtomicSemaphore>(site);
    if (kind == "wait-queue") return std::make_unique<WaitQueueLock>(site);
    if (kind == "bakery") return std::make_unique<BakeryLock>(site, 0);
    if (kind == "plain-semaphore") return std::make_unique<PlainSemaphore>(site);
    throw std::invalid_argument("no lock kind '" + kind + "'");
}

}   // namespace vrdmasim
