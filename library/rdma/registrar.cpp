#include "library/rdma/registrar.hpp"

#include "library/rdma/params.hpp"
#include "models/os/vm_params.hpp"
#include "src/core/failure_causes.hpp"
#include "src/core/format.hpp"

#include "models/smmu/smmu500.hpp"

#include <algorithm>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

namespace {

constexpr std::uint64_t kPage = 4096;
std::uint64_t page_down(std::uint64_t a) { return a & ~(kPage - 1); }
std::uint64_t page_up(std::uint64_t a) { return (a + kPage - 1) & ~(kPage - 1); }

// A run's failed transfers: registrations refused, and why the pins behind
// them were (RLIMIT_MEMLOCK, or the node's page frames).
const failure_causes::Declare kRegistrationFailures(10, [](const Config& cfg, const StatRegistry& stats) {
    const std::uint64_t reg = stats.sum_counters("rdma.registration_failures");
    if (!reg) return std::string();
    const std::uint64_t memlock = stats.sum_counters("vm.memlock_refusals");
    const std::uint64_t nomem = stats.sum_counters("vm.pin_no_memory");
    std::string cause;
    if (memlock)
        cause += std::to_string(memlock) +
                 " pin(s) beyond vm.memlock-limit = " + cfg.text(params_of<VmParams>().memlock_limit);
    if (nomem)
        cause += std::string(cause.empty() ? "" : ", ") + std::to_string(nomem) +
                 " pin(s) refused for lack of memory (ENOMEM: the node's page frames cannot hold "
                 "every pinned page resident)";
    if (cause.empty()) cause = "vm.memlock-limit = " + cfg.text(params_of<VmParams>().memlock_limit);
    return std::to_string(reg) +
           " registration(s) failed (rdma.strategy = " + cfg.text(params_of<RdmaParams>().strategy) + ": " + cause +
           ")";
});

}   // namespace

const char* to_string(Strategy s) {
    switch (s) {
    case Strategy::FaultTolerant: return "fault-tolerant";
    case Strategy::Pin: return "pin";
    case Strategy::PinCache: return "pin-cache";
    case Strategy::Prefault: return "prefault";
    case Strategy::Pipeline: return "pipeline";
    case Strategy::Netvm: return "netvm";
    case Strategy::PinStatic: return "pin-static";
    case Strategy::PinDeferred: return "pin-deferred";
    }
    return "?";
}

Strategy strategy_from(const Config& c) {
    const std::string& s = c[params_of<RdmaParams>().strategy];
    for (Strategy x : {Strategy::FaultTolerant, Strategy::Pin, Strategy::PinCache, Strategy::Prefault,
                       Strategy::Pipeline, Strategy::Netvm, Strategy::PinStatic, Strategy::PinDeferred})
        if (s == to_string(x)) return x;
    throw std::logic_error("rdma.strategy: unknown strategy '" + s + "'");
}

void Registrar::declare_metrics(MetricRegistry& reg) {
    // The library's statistics exist when the processes live in a Vm
    // (smmu.enabled), whether the engine translates through the SMMU or
    // (ni.translation = shadow) the NI's own table.
    const auto processes_in_vm = [](const Config& c) { return c[params_of<SmmuParams>().enabled]; };
    reg.sum_scalars("registration_us", "us",
                    "Time the user libraries spent in registration calls (acquire, release: sum of call "
                    "durations, `*.rdma.registration_time`).",
                    "rdma.registration_time", 6, processes_in_vm);
    reg.sum_scalars("pinned_peak_bytes", "B", "Sum over nodes of each library's peak of pinned bytes.",
                    "rdma.pinned_bytes_peak", 12, processes_in_vm);
    reg.sum_counters("registration_failures", "Registrations refused (RLIMIT_MEMLOCK).", {"rdma.registration_failures"},
                     processes_in_vm);
    reg.sum_scalars("deferred_pin_wait_us", "us",
                    "Time posts waited for pin-deferred registration (chunks of their range the registration "
                    "thread had not pinned yet, pinned by the post or waited for; `*.rdma.deferred_wait`).",
                    "rdma.deferred_wait", 6, processes_in_vm);
    reg.sum_counters("pin_cache_hits", "Pin-down cache lookups covered by one entry (`rdma.strategy = pin-cache`).",
                     {"rdma.cache_hits"}, processes_in_vm);
    reg.sum_counters("pin_cache_misses", "Pin-down cache lookups that pinned a new entry.", {"rdma.cache_misses"},
                     processes_in_vm);
}

Registrar::Registrar(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid, CpuCores& cpu)
    : vm_(vm),
      pid_(pid),
      cpu_(cpu),
      strategy_(strategy_from(ctx.config)),
      capacity_pages_(static_cast<std::uint64_t>(ctx.config[params_of<RdmaParams>().pin_cache_pages])),
      deferred_chunk_(ctx.config[params_of<RdmaParams>().pipeline_chunk]),
      lookup_(ctx.config[params_of<RdmaParams>().pin_cache_lookup]),
      registrations_(
          ctx.stats.counter(prefix + ".registrations", "", "acquire calls that pinned or populated a range")),
      deregistrations_(ctx.stats.counter(prefix + ".deregistrations", "", "unpin calls (Vm::unpin)")),
      hits_(ctx.stats.counter(prefix + ".cache_hits", "", "pin-down cache lookups covered by one entry")),
      misses_(ctx.stats.counter(prefix + ".cache_misses", "", "pin-down cache lookups that pinned a new entry")),
      evictions_(ctx.stats.counter(prefix + ".cache_evictions", "",
                                   "pin-down cache entries evicted (LRU, or to make room under memlock)")),
      invalidations_(
          ctx.stats.counter(prefix + ".cache_invalidations", "", "pin-down cache entries dropped by the MMU notifier")),
      over_capacity_(ctx.stats.counter(prefix + ".cache_over_capacity", "",
                                       "misses after which entries in use kept the cache above its capacity")),
      failures_(ctx.stats.counter(prefix + ".registration_failures", "",
                                  "registrations refused: acquire calls that failed (memlock limit, unmapped, "
                                  "read-only), and pin-static/pin-deferred buffers whose pin was refused")),
      background_pins_(
          ctx.stats.counter(prefix + ".background_pins", "", "pin-deferred: chunks pinned by the registration thread")),
      foreground_pins_(ctx.stats.counter(prefix + ".foreground_pins", "",
                                         "pin-deferred: chunks a post pinned itself (not reached by the "
                                         "registration thread yet)")),
      registration_time_(ctx.stats.scalar(prefix + ".registration_time", "us",
                                          "time in acquire/release/release_all (sum of done - at)", Scalar::Kind::Sum)),
      pinned_peak_(ctx.stats.scalar(prefix + ".pinned_bytes_peak", "B",
                                    "largest pinned bytes of the process seen after a call", Scalar::Kind::Level)),
      deferred_wait_(ctx.stats.scalar(prefix + ".deferred_wait", "us",
                                      "pin-deferred: time acquire calls waited for chunks not pinned yet (pinned "
                                      "by the call, or being pinned by the registration thread)",
                                      Scalar::Kind::Sum)),
      background_time_(ctx.stats.scalar(prefix + ".background_pin_time", "us",
                                        "pin-deferred: time the registration thread spent pinning (off the "
                                        "critical path; its CPU time is charged to the cores as `pin`)",
                                        Scalar::Kind::Sum)) {}

RegResult Registrar::finish(RegResult r, sc_time at) {
    registration_time_.add(to_us(r.done - at));
    peak_ = std::max(peak_, vm_.pinned_bytes(pid_));
    pinned_peak_.set(static_cast<double>(peak_));
    return r;
}

sc_time Registrar::unpin_entry(const Entry& e, sc_time t) {
    const VmResult u = vm_.unpin(pid_, e.start, e.end - e.start, t);
    if (!u.ok())   // pins are found by VA even after munmap: this is a bookkeeping bug
        throw std::logic_error(std::string("Registrar: unpin of a cache entry failed: ") + to_string(u.error));
    deregistrations_.inc();
    return u.done;
}

sc_time Registrar::drain_dropped(sc_time t) {
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
sc_time Registrar::evict_while(Pred over, sc_time t) {
    // From the least recently used end; entries in use are passed over.
    for (auto it = cache_.end(); it != cache_.begin() && over();) {
        --it;
        if (it->users) continue;
        t = unpin_entry(*it, t);
        cached_pages_ -= it->pages();
        evictions_.inc();
        it = cache_.erase(it);
    }
    return t;
}

RegResult Registrar::acquire(std::uint64_t va, std::uint64_t len, bool write, sc_time at) {
    RegResult r;
    r.done = at;
    switch (strategy_) {
    case Strategy::FaultTolerant:
    case Strategy::Netvm: return finish(r, at);
    case Strategy::Pin:
    case Strategy::Pipeline: {
        const VmResult p = vm_.pin(pid_, va, len, at);
        r.done = p.done;
        if (!p.ok()) {
            r.ok = false;
            r.error = p.error;
            failures_.inc();
        } else {
            registrations_.inc();
            pages_pinned_ += p.value;
        }
        return finish(r, at);
    }
    case Strategy::Prefault: {
        const std::uint64_t s = page_down(va), e = page_up(va + len);
        const VmResult p = vm_.madvise(pid_, s, e - s, Advice::PopulateWrite, at);
        r.done = p.done;
        if (!p.ok()) {
            r.ok = false;
            r.error = p.error;
            failures_.inc();
        } else {
            registrations_.inc();
        }
        return finish(r, at);
    }
    case Strategy::PinStatic:
    case Strategy::PinDeferred: return acquire_whole(va, len, at);
    case Strategy::PinCache: break;
    }
    // pin-cache
    sc_time t = drain_dropped(at);
    t = cpu_.run("registration", t, lookup_, "pin-cache-lookup").end;
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
        if (it->start <= s && e <= it->end) {   // hit: no pin
            hits_.inc();
            it->users++;
            cache_.splice(cache_.begin(), cache_, it);
            r.done = t;
            return finish(r, at);
        }
    }
    misses_.inc();
    VmResult p = vm_.pin(pid_, s, e - s, t);
    if (p.error == VmError::MemlockLimit) {   // make room: every unused entry goes, then one retry
        t = evict_while([] { return true; }, p.done);
        p = vm_.pin(pid_, s, e - s, t);
    }
    r.done = p.done;
    if (!p.ok()) {
        r.ok = false;
        r.error = p.error;
        failures_.inc();
        return finish(r, at);
    }
    registrations_.inc();
    pages_pinned_ += p.value;
    cache_.push_front(Entry{s, e, 1});
    cached_pages_ += (e - s) / kPage;
    r.done = evict_while([this] { return cached_pages_ > capacity_pages_; }, p.done);
    if (cached_pages_ > capacity_pages_) over_capacity_.inc();
    return finish(r, at);
}

RegResult Registrar::release(std::uint64_t va, std::uint64_t len, sc_time at) {
    RegResult r;
    r.done = at;
    switch (strategy_) {
    case Strategy::FaultTolerant:
    case Strategy::Netvm:
    case Strategy::Prefault: return finish(r, at);
    case Strategy::Pin:
    case Strategy::Pipeline: {
        const VmResult u = vm_.unpin(pid_, va, len, at);
        r.done = u.done;
        if (!u.ok()) {
            r.ok = false;
            r.error = u.error;
        } else {
            deregistrations_.inc();
        }
        return finish(r, at);
    }
    case Strategy::PinStatic:
    case Strategy::PinDeferred: return release_whole(va, len, at);
    case Strategy::PinCache: break;
    }
    // pin-cache: lazy deregistration. The entry released is the most
    // recently used one in use that covers the range; an entry dropped by
    // the notifier while in use is unpinned now that it is no longer used.
    sc_time t = drain_dropped(at);
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    auto covers = [&](const Entry& x) { return x.users && x.start <= s && e <= x.end; };
    auto it = std::find_if(cache_.begin(), cache_.end(), covers);
    if (it != cache_.end()) {
        it->users--;
    } else {
        auto d = std::find_if(dropped_.begin(), dropped_.end(), covers);
        if (d == dropped_.end()) {   // nothing acquired there
            r.ok = false;
            r.error = VmError::Invalid;
            return finish(r, at);
        }
        if (--d->users == 0) {
            t = unpin_entry(*d, t);
            dropped_.erase(d);
        }
    }
    r.done = t;
    return finish(r, at);
}

RegResult Registrar::release_all(sc_time at) {
    RegResult r;
    r.done = at;
    if (strategy_ == Strategy::PinStatic || strategy_ == Strategy::PinDeferred) {
        sc_time t = at;
        for (Buffer& b : buffers_)
            for (Chunk& c : b.chunks) {
                if (c.state != ChunkState::Pinning) continue;   // never pinned, or refused
                t = std::max(t, c.done);   // the thread may still be at it
                const VmResult u = vm_.unpin(pid_, c.start, c.end - c.start, t);
                if (!u.ok())
                    throw std::logic_error(std::string("Registrar: unpin of a buffer chunk failed: ") +
                                           to_string(u.error));
                deregistrations_.inc();
                t = u.done;
            }
        buffers_.clear();
        next_pending_ = 0;
        r.done = t;
        return finish(r, at);
    }
    if (strategy_ != Strategy::PinCache) return finish(r, at);
    sc_time t = at;
    for (const Entry& x : dropped_) t = unpin_entry(x, t);   // in use or not: the program ends
    dropped_.clear();
    for (const Entry& x : cache_) t = unpin_entry(x, t);
    cache_.clear();
    cached_pages_ = 0;
    r.done = t;
    return finish(r, at);
}

bool Registrar::pin_chunk(Chunk& c, sc_time t) {
    const VmResult p = vm_.pin(pid_, c.start, c.end - c.start, t);
    if (!p.ok()) {
        c.state = ChunkState::Failed;
        c.error = p.error;
        c.done = p.done;
        failures_.inc();
        return false;
    }
    c.state = ChunkState::Pinning;
    c.done = p.done;
    registrations_.inc();
    pages_pinned_ += p.value;
    peak_ = std::max(peak_, vm_.pinned_bytes(pid_));
    pinned_peak_.set(static_cast<double>(peak_));
    return true;
}

RegResult Registrar::on_alloc(std::uint64_t va, std::uint64_t len, sc_time at) {
    RegResult r;
    r.done = at;
    if (strategy_ != Strategy::PinStatic && strategy_ != Strategy::PinDeferred) return r;
    Buffer b;
    b.start = page_down(va);
    b.end = page_up(va + std::max<std::uint64_t>(len, 1));
    b.queued = at;
    const std::uint64_t step = strategy_ == Strategy::PinStatic ? b.end - b.start : page_up(deferred_chunk_);
    for (std::uint64_t s = b.start; s < b.end; s += step) {
        Chunk c;
        c.start = s;
        c.end = std::min(b.end, s + step);
        b.chunks.push_back(c);
    }
    buffers_.push_back(std::move(b));
    if (strategy_ == Strategy::PinDeferred) return r;   // the registration thread's work
    Chunk& c = buffers_.back().chunks.front();
    if (!pin_chunk(c, at)) {
        r.ok = false;
        r.error = c.error;
    }
    r.done = c.done;
    return finish(r, at);
}

bool Registrar::background_pending() const {
    for (std::size_t i = next_pending_; i < buffers_.size(); ++i)
        for (const Chunk& c : buffers_[i].chunks)
            if (c.state == ChunkState::Pending) return true;
    return false;
}

sc_time Registrar::background_step(sc_time at) {
    for (; next_pending_ < buffers_.size(); ++next_pending_) {
        Buffer& b = buffers_[next_pending_];
        for (Chunk& c : b.chunks) {
            if (c.state != ChunkState::Pending) continue;
            const sc_time t = std::max(at, b.queued);
            pin_chunk(c, t);
            if (c.state == ChunkState::Pinning) background_pins_.inc();
            background_time_.add(to_us(c.done - t));
            return c.done;
        }
    }
    return at;
}

RegResult Registrar::acquire_whole(std::uint64_t va, std::uint64_t len, sc_time at) {
    RegResult r;
    sc_time t = at;
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    std::uint64_t covered = 0;
    for (Buffer& b : buffers_) {
        if (b.end <= s || e <= b.start) continue;
        covered += std::min(e, b.end) - std::max(s, b.start);
        for (Chunk& c : b.chunks) {
            if (c.end <= s || e <= c.start) continue;
            switch (c.state) {
            case ChunkState::Pinning:   // pinned by then, or the thread is at it: wait for it
                t = std::max(t, c.done);
                break;
            case ChunkState::Pending:   // not reached by the thread: the post pins it itself
                if (pin_chunk(c, t)) foreground_pins_.inc();
                t = c.done;
                if (c.state == ChunkState::Failed) {
                    r.ok = false;
                    r.error = c.error;
                }
                break;
            case ChunkState::Failed:   // refused (memlock, memory): every post in it fails
                if (r.ok) failures_.inc();
                r.ok = false;
                r.error = c.error;
                break;
            }
        }
    }
    if (covered != e - s)   // the library registers only what the application allocated
        throw std::logic_error(std::string("Registrar: rdma.strategy = ") + to_string(strategy_) + ": [" + hex(va) +
                               ", +" + std::to_string(len) + ") is not inside buffers the application allocated");
    if (strategy_ == Strategy::PinDeferred) deferred_wait_.add(to_us(t - at));
    r.done = t;
    return finish(r, at);
}

RegResult Registrar::release_whole(std::uint64_t va, std::uint64_t len, sc_time at) {
    // Buffers stay pinned until release_all: nothing to do per message.
    RegResult r;
    r.done = at;
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    std::uint64_t covered = 0;
    for (const Buffer& b : buffers_)
        if (b.start < e && s < b.end) covered += std::min(e, b.end) - std::max(s, b.start);
    if (covered != e - s) {
        r.ok = false;
        r.error = VmError::Invalid;
    }
    return finish(r, at);
}

sc_time Registrar::invalidate(int pid, std::uint16_t, std::uint64_t va, std::uint64_t len, sc_time at) {
    if (pid != pid_ || strategy_ != Strategy::PinCache) return at;
    const std::uint64_t end = va + len;
    for (auto it = cache_.begin(); it != cache_.end();) {
        if (it->start < end && va < it->end) {
            invalidations_.inc();
            cached_pages_ -= it->pages();
            auto next = std::next(it);
            dropped_.splice(dropped_.end(), cache_, it);   // unpinned at the next call
            it = next;
        } else {
            ++it;
        }
    }
    return at;
}

}   // namespace vrdmasim
