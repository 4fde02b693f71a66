// A sleeping lock with a wait queue at the home: words {count, head, tail,
// slot[processes]}. Acquire fetch-and-adds `count`; 0 before: held. Else it
// takes a ticket (fetch-and-add on `tail`), swaps its id + 1 into the
// ticket's slot and sleeps until a notification says its `granted` word (in
// its own memory) was written. Release fetch-and-adds -1 on `count`; 1
// before: no one waits. Else it takes the next ticket from `head`, swaps the
// slot back to 0 (polling, backing off, until the waiter has written it) and
// wakes that waiter with a notifying RDMA write to its `granted` word.
#pragma once

#include "library/locks/lock.hpp"

namespace vrdmasim {

class WaitQueueLock : public DistributedLock {
public:
    using DistributedLock::DistributedLock;
    std::vector<std::uint64_t> initial_words() const override;
    unsigned local_words() const override { return 1; }   // granted
    void acquire(RemoteMemory& rm, unsigned me) override;
    void release(RemoteMemory& rm, unsigned me) override;
    std::string check_idle(const std::vector<std::uint64_t>& words) const override;
};

}   // namespace vrdmasim
