// Lamport's bakery lock (1974) from plain RDMA reads and writes only: words
// {choosing[processes], number[processes]} at the home (from word `first`).
// Acquire announces that it is choosing, reads every number, takes the
// largest + 1, then for every other process waits (polling with back-off)
// until it is not choosing and holds no smaller (number, id). Release writes
// its number back to 0. Each write waits for its completion, so a later read
// by anyone sees it.
#pragma once

#include "library/locks/lock.hpp"

namespace vrdmasim {

class BakeryLock : public DistributedLock {
public:
    // Its words start at word `first` of the site (plain_semaphore puts its count before them).
    BakeryLock(const LockSite& site, unsigned first) : DistributedLock(site), first_(first) {}
    std::vector<std::uint64_t> initial_words() const override;
    void acquire(RemoteMemory& rm, unsigned me) override;
    void release(RemoteMemory& rm, unsigned me) override;
    std::string check_idle(const std::vector<std::uint64_t>& words) const override;

private:
    std::uint64_t choosing(unsigned i) const { return site_.word(first_ + i); }
    std::uint64_t number(unsigned i) const { return site_.word(first_ + site_.processes + i); }
    const unsigned first_;
};

}   // namespace vrdmasim
