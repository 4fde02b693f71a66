#include "library/locks/wait_queue.hpp"

#include <stdexcept>

namespace vrdmasim {

namespace {
constexpr unsigned kCount = 0, kHead = 1, kTail = 2, kSlots = 3;
constexpr std::uint64_t kMinusOne = ~std::uint64_t(0);
}   // namespace

std::vector<std::uint64_t> WaitQueueLock::initial_words() const {
    return std::vector<std::uint64_t>(kSlots + site_.processes, 0);
}

void WaitQueueLock::acquire(RemoteMemory& rm, unsigned me) {
    if (rm.atomic(AtomicOp::FetchAdd, site_.home, site_.word(kCount), 1) == 0) return;
    // Queue up: at most processes - 1 wait at once, so a slot is free again
    // before its ticket comes round.
    const std::uint64_t ticket = rm.atomic(AtomicOp::FetchAdd, site_.home, site_.word(kTail), 1);
    const unsigned slot = kSlots + static_cast<unsigned>(ticket % site_.processes);
    if (rm.atomic(AtomicOp::Swap, site_.home, site_.word(slot), me + 1) != 0)
        throw std::runtime_error(rm.app().group() + ": wait queue slot still taken");
    const RemoteMemory::Note n = rm.next_note();   // sleep until woken
    if (n.addr != site_.local.at(me))
        throw std::runtime_error(rm.app().group() + ": wait queue: a notification for another word");
}

void WaitQueueLock::release(RemoteMemory& rm, unsigned) {
    if (rm.atomic(AtomicOp::FetchAdd, site_.home, site_.word(kCount), kMinusOne) == 1) return;
    const std::uint64_t ticket = rm.atomic(AtomicOp::FetchAdd, site_.home, site_.word(kHead), 1);
    const unsigned slot = kSlots + static_cast<unsigned>(ticket % site_.processes);
    Backoff b;
    std::uint64_t waiter = 0;
    while ((waiter = rm.atomic(AtomicOp::Swap, site_.home, site_.word(slot), 0)) == 0) b.wait(rm.app(), site_);
    const unsigned w = static_cast<unsigned>(waiter - 1);
    rm.put(w, site_.local.at(w), 1, true);   // wake it: the lock is its
}

std::string WaitQueueLock::check_idle(const std::vector<std::uint64_t>& w) const {
    if (w.at(kCount) != 0) return "wait queue count is " + std::to_string(w[kCount]) + ", not 0";
    if (w.at(kHead) != w.at(kTail))
        return "wait queue head " + std::to_string(w[kHead]) + " != tail " + std::to_string(w[kTail]);
    for (unsigned k = kSlots; k < w.size(); ++k)
        if (w[k] != 0) return "wait queue slot " + std::to_string(k - kSlots) + " still holds a waiter";
    return {};
}

}   // namespace vrdmasim
