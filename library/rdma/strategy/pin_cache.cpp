// pin-cache: the pin-down cache (pin_cache.hpp).
#include "library/rdma/strategy/pin_cache.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/os/cpu.hpp"

namespace vrdmasim {

using sc_core::sc_time;

PinCache::PinCache(const StrategyEnv& env)
    : env_(env),
      capacity_pages_(static_cast<std::uint64_t>(env.config[params_of<StrategyParams>().pin_cache_pages])),
      lookup_(env.config[params_of<StrategyParams>().pin_cache_lookup]) {}

sc_time PinCache::unpin_entry(const Entry& e, sc_time t) {
    const VmResult u = env_.vm.unpin(env_.pid, e.start, e.end - e.start, t);
    if (!u.ok())   // pins are found by VA even after munmap: this is a bookkeeping bug
        throw std::logic_error(std::string("pin-cache: unpin of a cache entry failed: ") + to_string(u.error));
    env_.stats.deregistrations.inc();
    return u.done;
}

sc_time PinCache::drain_dropped(sc_time t) {
    for (auto it = dropped_.begin(); it != dropped_.end();) {
        if (it->users) {
            ++it;
            continue;
        }
        t = unpin_entry(*it, t);
        it = dropped_.erase(it);
    }
    return t;
}

template <typename Pred>
sc_time PinCache::evict_while(Pred over, sc_time t) {
    // From the least recently used end; entries in use are passed over.
    for (auto it = cache_.end(); it != cache_.begin() && over();) {
        --it;
        if (it->users) continue;
        t = unpin_entry(*it, t);
        cached_pages_ -= it->pages();
        env_.stats.evictions.inc();
        it = cache_.erase(it);
    }
    return t;
}

RegResult PinCache::acquire(std::uint64_t va, std::uint64_t len, bool, sc_time at) {
    RegResult r;
    sc_time t = drain_dropped(at);
    t = env_.cpu.run("registration", t, lookup_, "pin-cache-lookup").end;
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
        if (it->start <= s && e <= it->end) {   // hit: no pin
            env_.stats.hits.inc();
            it->users++;
            cache_.splice(cache_.begin(), cache_, it);
            r.done = t;
            return r;
        }
    }
    env_.stats.misses.inc();
    VmResult p = env_.vm.pin(env_.pid, s, e - s, t);
    if (p.error == VmError::MemlockLimit) {   // make room: every unused entry goes, then one retry
        t = evict_while([] { return true; }, p.done);
        p = env_.vm.pin(env_.pid, s, e - s, t);
    }
    r = env_.stats.count(p, true);
    if (!r.ok) return r;
    cache_.push_front(Entry{s, e, 1});
    cached_pages_ += (e - s) / kPage;
    r.done = evict_while([this] { return cached_pages_ > capacity_pages_; }, p.done);
    if (cached_pages_ > capacity_pages_) env_.stats.over_capacity.inc();
    return r;
}

RegResult PinCache::release(std::uint64_t va, std::uint64_t len, sc_time at) {
    // Lazy deregistration. The entry released is the most recently used one
    // in use that covers the range; an entry dropped by the notifier while
    // in use is unpinned now that it is no longer used.
    RegResult r;
    sc_time t = drain_dropped(at);
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    auto covers = [&](const Entry& x) { return x.users && x.start <= s && e <= x.end; };
    auto it = std::find_if(cache_.begin(), cache_.end(), covers);
    if (it != cache_.end()) {
        it->users--;
    } else {
        auto d = std::find_if(dropped_.begin(), dropped_.end(), covers);
        if (d == dropped_.end()) {   // nothing acquired there
            return RegResult{false, VmError::Invalid, at};
        }
        if (--d->users == 0) {
            t = unpin_entry(*d, t);
            dropped_.erase(d);
        }
    }
    r.done = t;
    return r;
}

RegResult PinCache::release_all(sc_time at) {
    sc_time t = at;
    for (const Entry& x : dropped_) t = unpin_entry(x, t);   // in use or not: the program ends
    dropped_.clear();
    for (const Entry& x : cache_) t = unpin_entry(x, t);
    cache_.clear();
    cached_pages_ = 0;
    return RegResult{true, VmError::Ok, t};
}

void PinCache::invalidate(std::uint64_t va, std::uint64_t len) {
    const std::uint64_t end = va + len;
    for (auto it = cache_.begin(); it != cache_.end();) {
        if (it->start < end && va < it->end) {
            env_.stats.invalidations.inc();
            cached_pages_ -= it->pages();
            auto next = std::next(it);
            dropped_.splice(dropped_.end(), cache_, it);   // unpinned at the next call
            it = next;
        } else {
            ++it;
        }
    }
}

namespace {

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "pin-cache";
    k.order = 30;
    k.help = "pin-cache: pin-down cache (pin on a miss, lazy unpin, LRU eviction, dropped by the MMU notifier)";
    k.create = [](const StrategyEnv& env) { return std::make_unique<PinCache>(env); };
    k.makes_present = true;
    k.pins_per_post = true;
    k.declare_metrics = [](MetricRegistry& reg, const MetricRegistry::Presence& present) {
        reg.sum_counters("pin_cache_hits", "Pin-down cache lookups covered by one entry (`rdma.strategy = pin-cache`).",
                         {"rdma.cache_hits"}, present);
        reg.sum_counters("pin_cache_misses", "Pin-down cache lookups that pinned a new entry.", {"rdma.cache_misses"},
                         present);
    };
    return k;
}());

}   // namespace
}   // namespace vrdmasim
