// Test-and-set spin lock on one word at the home: acquire swaps 1 in until
// the old value is 0, backing off (doubling) between tries; release swaps 0
// in (and checks that the lock was held).
#pragma once

#include "library/locks/lock.hpp"

namespace vrdmasim {

class SpinLock : public DistributedLock {
public:
    using DistributedLock::DistributedLock;
    std::vector<std::uint64_t> initial_words() const override { return {0}; }
    void acquire(RemoteMemory& rm, unsigned me) override;
    void release(RemoteMemory& rm, unsigned me) override;
    std::string check_idle(const std::vector<std::uint64_t>& words) const override;
};

}   // namespace vrdmasim
