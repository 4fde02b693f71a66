// The registry of registration strategies (each declares itself in its own
// file), rdma.strategy's parameters, and what every strategy shares: its
// statistics and the hooks' defaults.
#include "library/rdma/strategy/strategy.hpp"

#include "src/core/declarations.hpp"

#include <algorithm>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

namespace {

Declarations<StrategyKind>& kinds() {
    static Declarations<StrategyKind> k(
        "registration strategy");   // made at its first use: any order of initialisation
    return k;
}

// rdma.strategy's choices and help: the declared strategies.
std::vector<std::string> strategy_names() {
    std::vector<std::string> names;
    for (const StrategyKind& k : registration_strategies::all()) names.push_back(k.name);
    return names;
}

std::string strategy_help() {
    std::string help = "how the library makes a buffer usable by the engine. ";
    bool first = true;
    for (const StrategyKind& k : registration_strategies::all()) {
        help += (first ? "" : "; ") + k.help;
        first = false;
    }
    return help;
}

}   // namespace

StrategyParams::StrategyParams()
    : set("rdma", ""),
      strategy(set.choice("strategy", "fault-tolerant", strategy_names(), strategy_help())),
      pin_cache_pages(set.integer("pin-cache-pages", "16384",
                                  "capacity of the pin-down cache in 4 KiB pages (16384 = 64 MiB; *estimate*, a "
                                  "library's cache limit, bounded in practice by vm.memlock-limit)")
                          .range("1", "1099511627776")),
      pin_cache_lookup(set.time("pin-cache-lookup", "100ns", "CPU time of one pin-down cache lookup (*estimate*)")
                           .range("0ps", "1ms")),
      pipeline_chunk(
          set.size(
                 "pipeline-chunk", "256KiB",
                 "chunk of pipelined registration: pin of chunk i+1 overlaps the transfer of chunk i "
                 "(*estimate*; used by the RdmaProcess). Also the unit the pin-deferred registration thread pins at a time")
              .range("4KiB", "1GiB")) {}

RegistrationStats::RegistrationStats(StatRegistry& stats, const std::string& prefix)
    : registrations(stats.counter(prefix + ".registrations", "", "acquire calls that pinned or populated a range")),
      deregistrations(stats.counter(prefix + ".deregistrations", "", "unpin calls (Vm::unpin)")),
      hits(stats.counter(prefix + ".cache_hits", "", "pin-down cache lookups covered by one entry")),
      misses(stats.counter(prefix + ".cache_misses", "", "pin-down cache lookups that pinned a new entry")),
      evictions(stats.counter(prefix + ".cache_evictions", "",
                              "pin-down cache entries evicted (LRU, or to make room under memlock)")),
      invalidations(
          stats.counter(prefix + ".cache_invalidations", "", "pin-down cache entries dropped by the MMU notifier")),
      over_capacity(stats.counter(prefix + ".cache_over_capacity", "",
                                  "misses after which entries in use kept the cache above its capacity")),
      failures(stats.counter(prefix + ".registration_failures", "",
                             "registrations refused: acquire calls that failed (memlock limit, unmapped, "
                             "read-only), and pin-static/pin-deferred buffers whose pin was refused")),
      background_pins(
          stats.counter(prefix + ".background_pins", "", "pin-deferred: chunks pinned by the registration thread")),
      foreground_pins(stats.counter(prefix + ".foreground_pins", "",
                                    "pin-deferred: chunks a post pinned itself (not reached by the "
                                    "registration thread yet)")),
      registration_time(stats.scalar(prefix + ".registration_time", "us",
                                     "time in acquire/release/release_all (sum of done - at)", Scalar::Kind::Sum)),
      pinned_peak(stats.scalar(prefix + ".pinned_bytes_peak", "B",
                               "largest pinned bytes of the process seen after a call", Scalar::Kind::Level)),
      deferred_wait(stats.scalar(prefix + ".deferred_wait", "us",
                                 "pin-deferred: time acquire calls waited for chunks not pinned yet (pinned "
                                 "by the call, or being pinned by the registration thread)",
                                 Scalar::Kind::Sum)),
      background_time(stats.scalar(prefix + ".background_pin_time", "us",
                                   "pin-deferred: time the registration thread spent pinning (off the "
                                   "critical path; its CPU time is charged to the cores as `pin`)",
                                   Scalar::Kind::Sum)) {}

void RegistrationStats::pinned(std::uint64_t pages) {
    registrations.inc();
    pages_pinned += pages;
}

RegResult RegistrationStats::count(const VmResult& v, bool pins) {
    if (!v.ok()) {
        failures.inc();
        return RegResult{false, v.error, v.done};
    }
    if (pins) pinned(v.value);
    else registrations.inc();
    return RegResult{true, VmError::Ok, v.done};
}

void RegistrationStats::see_peak(std::uint64_t pinned_bytes) {
    peak = std::max(peak, pinned_bytes);
    pinned_peak.set(static_cast<double>(peak));
}

RegResult RegistrationStrategy::on_alloc(std::uint64_t, std::uint64_t, sc_time at) {
    return RegResult{true, VmError::Ok, at};
}

RegResult RegistrationStrategy::release_all(sc_time at) { return RegResult{true, VmError::Ok, at}; }

void RegistrationStrategy::invalidate(std::uint64_t, std::uint64_t) {}

StrategyKind::Declare::Declare(StrategyKind k) { kinds().add(std::move(k)); }

namespace registration_strategies {

const std::vector<StrategyKind>& all() { return kinds().all(); }

const StrategyKind& of(const std::string& name) {
    if (const StrategyKind* k = kinds().find(name)) return *k;
    throw std::logic_error("rdma.strategy = " + name + ": no such registration strategy is declared");
}

const StrategyKind& of(const Config& c) { return of(c[params_of<StrategyParams>().strategy]); }

void declare_metrics(MetricRegistry& reg, const MetricRegistry::Presence& present) {
    for (const StrategyKind& k : all())
        if (k.declare_metrics) k.declare_metrics(reg, present);
}

}   // namespace registration_strategies
}   // namespace vrdmasim
