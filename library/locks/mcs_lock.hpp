// MCS queue lock (Mellor-Crummey and Scott 1991) across nodes: the home holds
// the queue's tail (process id + 1, 0: free); each process has its queue
// node in its own memory, {next, locked}. Acquire swaps itself into the
// tail; with a predecessor it writes its id into the predecessor's `next`
// (an RDMA write that notifies) and waits in its own memory for the
// predecessor's hand-over write to its `locked` word (a notification: the
// local spin of the original, without network traffic). Release hands over
// to the known successor, or compare-and-swaps the tail back to 0; if that
// fails a successor is linking itself in, and release waits for its write.
#pragma once

#include "library/locks/lock.hpp"

namespace vrdmasim {

class McsLock : public DistributedLock {
public:
    using DistributedLock::DistributedLock;
    std::vector<std::uint64_t> initial_words() const override { return {0}; }
    unsigned local_words() const override { return 2; }   // next, locked
    void acquire(RemoteMemory& rm, unsigned me) override;
    void release(RemoteMemory& rm, unsigned me) override;
    std::string check_idle(const std::vector<std::uint64_t>& words) const override;

private:
    // Take the next notification: a successor's link (remembered) or the
    // hand-over (true).
    bool note(RemoteMemory& rm, unsigned me);
    unsigned successor_ = 0;   // id + 1 of the process queued behind this one; 0: none known
};

}   // namespace vrdmasim
