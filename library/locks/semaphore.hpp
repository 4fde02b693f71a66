// Counting semaphore on one word at the home (initially site.count): P
// fetch-and-adds -1 and holds if the old value was positive, else adds 1
// back and backs off; V fetch-and-adds 1.
#pragma once

#include "library/locks/lock.hpp"

namespace vrdmasim {

class AtomicSemaphore : public DistributedLock {
public:
    using DistributedLock::DistributedLock;
    std::vector<std::uint64_t> initial_words() const override { return {site_.count}; }
    void acquire(RemoteMemory& rm, unsigned me) override;
    void release(RemoteMemory& rm, unsigned me) override;
    std::string check_idle(const std::vector<std::uint64_t>& words) const override;
};

}   // namespace vrdmasim
