// The event counters a sender names (DESC_FLAGS kFlagCounter, DESC_COUNTER):
// `dma.event-counters` 64-bit counters per channel page (EVENT_COUNTER[i] at
// 0x800 + 8 i), incremented by the receiving engine when a write naming
// counter i has fully landed. Each increment becomes visible at its own
// time (a register read at t sees only increments with time <= t); software
// may write a counter (reset it). README.md "Event counters".
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include <systemc>
#include "src/core/lazy_deque.hpp"

namespace vrdmasim {

class EventCounter {
public:
    // One increment, visible from `at` on.
    void increment_at(sc_core::sc_time at);
    // The register's value at `at` (callers ask about times that never go
    // back by more than a quantum, as CompletionSignal's).
    std::uint64_t value_at(sc_core::sc_time at);
    // Software's write of `v` at `at`: increments visible by then are
    // replaced by `v`; later ones count on top of it.
    void write_at(std::uint64_t v, sc_core::sc_time at);
    // Increments made so far, whatever their time.
    std::uint64_t increments() const { return increments_; }

private:
    void fold(sc_core::sc_time at);
    std::uint64_t value_ = 0;   // the value with every increment folded in so far
    std::uint64_t increments_ = 0;
    LazyDeque<sc_core::sc_time> pending_;   // sorted: increments not visible yet at the last look
};

// A channel's counters, created on first use (most channels never name one:
// a node of 16 channels x 64 counters would otherwise hold 1,024 of them).
class EventCounters {
public:
    EventCounter& operator[](std::uint32_t i) { return counters_[i]; }
    std::uint64_t value_at(std::uint32_t i, sc_core::sc_time at);
    // Increments made so far over all counters of the channel.
    std::uint64_t increments() const;

private:
    std::map<std::uint32_t, EventCounter> counters_;
};

}   // namespace vrdmasim
