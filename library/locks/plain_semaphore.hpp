// Counting semaphore from plain RDMA reads and writes: its count (word 0 at
// the home, initially site.count) is read and written only under a bakery
// lock (words from 1). P: under the lock, take one if the count is positive,
// else release the lock, back off and try again. V: under the lock, add one.
#pragma once

#include "library/locks/bakery.hpp"

namespace vrdmasim {

class PlainSemaphore : public DistributedLock {
public:
    explicit PlainSemaphore(const LockSite& site) : DistributedLock(site), guard_(site, 1) {}
    std::vector<std::uint64_t> initial_words() const override;
    void acquire(RemoteMemory& rm, unsigned me) override;
    void release(RemoteMemory& rm, unsigned me) override;
    std::string check_idle(const std::vector<std::uint64_t>& words) const override;

private:
    BakeryLock guard_;
};

}   // namespace vrdmasim
