// pin-cache: a pin-down cache. An acquire pins on a miss and keeps the pins
// (lazy deregistration: a release only marks the entry unused); entries
// beyond rdma.pin-cache-pages are evicted from the least recently used end
// (unused ones only), and all unused ones when a pin meets RLIMIT_MEMLOCK;
// the MMU notifier drops the entries over a changed range, whose pins are
// released at the start of the next call once no longer in use.
#pragma once

#include <list>

#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

class PinCache final : public RegistrationStrategy {
public:
    explicit PinCache(const StrategyEnv& env);
    RegResult acquire(std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at) override;
    RegResult release(std::uint64_t va, std::uint64_t len, sc_core::sc_time at) override;
    RegResult release_all(sc_core::sc_time at) override;
    void invalidate(std::uint64_t va, std::uint64_t len) override;

    // 4 KiB pages held by the entries now in the cache (not those dropped
    // and waiting for their unpin).
    std::uint64_t cached_pages() const { return cached_pages_; }
    // Entries in the cache (inspection, tests).
    std::size_t entries() const { return cache_.size(); }

private:
    struct Entry {
        std::uint64_t start = 0, end = 0;   // page-aligned
        unsigned users = 0;   // acquires not yet released
        std::uint64_t pages() const { return (end - start) / 4096; }
    };
    using List = std::list<Entry>;
    // Unpin one entry's range at t (a deregistration); returns the end.
    sc_core::sc_time unpin_entry(const Entry& e, sc_core::sc_time t);
    // Unpin the dropped entries that are no longer in use.
    sc_core::sc_time drain_dropped(sc_core::sc_time t);
    // Evict unused entries from the LRU end while `over()`; returns the end.
    template <typename Pred>
    sc_core::sc_time evict_while(Pred over, sc_core::sc_time t);

    StrategyEnv env_;
    std::uint64_t capacity_pages_;
    sc_core::sc_time lookup_;
    List cache_;   // most recently used first
    List dropped_;   // invalidated, pins not yet released
    std::uint64_t cached_pages_ = 0;
};

}   // namespace vrdmasim
