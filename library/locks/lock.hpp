// A distributed lock or semaphore of the user library, held in the memory
// of a home node and taken by processes on any node through their engines
// (RemoteMemory). Each process has its own instance (its own state: the
// successor it knows of, its ticket); they share a LockSite. Kinds: built on
// network atomics (spin_lock, mcs_lock, semaphore, wait_queue) and the same
// from plain RDMA reads and writes only (bakery, plain_semaphore).
// README.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "library/locks/remote_memory.hpp"

namespace vrdmasim {

struct LockSite {
    unsigned home = 0;   // the node whose memory holds the lock's words
    std::uint64_t base = 0;   // their address in the home process
    unsigned processes = 0;   // contenders, one per node: ids 0..processes-1 (= node)
    std::vector<std::uint64_t> local;   // per process: the address of its own words (local_words() of them)
    unsigned count = 1;   // semaphores: holders at once
    sc_core::sc_time backoff, backoff_max;   // polling back-off: first wait, and the longest
    std::uint64_t word(unsigned k) const { return base + 8 * k; }
};

class DistributedLock {
public:
    explicit DistributedLock(const LockSite& site) : site_(site) {}
    virtual ~DistributedLock() = default;
    // The lock's words at the home and their initial values.
    virtual std::vector<std::uint64_t> initial_words() const = 0;
    // Words each process needs in its own memory (written by its peers).
    virtual unsigned local_words() const { return 0; }
    virtual void acquire(RemoteMemory& rm, unsigned me) = 0;
    virtual void release(RemoteMemory& rm, unsigned me) = 0;
    // With every acquisition released, the home words as the run left them:
    // empty if they say "free", else what is wrong (a lost release).
    virtual std::string check_idle(const std::vector<std::uint64_t>& words) const = 0;

protected:
    // Back-off doubling from site.backoff up to site.backoff_max, spent as
    // CPU time (the process spins between polls).
    struct Backoff {
        sc_core::sc_time next;
        void wait(RdmaProcess& app, const LockSite& s);
    };
    const LockSite& site_;
};

// "spin", "mcs", "semaphore", "wait-queue", "bakery", "plain-semaphore".
std::unique_ptr<DistributedLock> make_lock(const std::string& kind, const LockSite& site);
// Semaphores (holders up to site.count) rather than locks.
bool is_semaphore(const std::string& kind);

}   // namespace vrdmasim
