// A count of the timed notifications the SystemC kernel has been given:
// every sc_event_timed it makes (a timed notify, a wait for a time, a
// notification moved earlier), counted where they are allocated, by
// src/sim/event_order.cpp, which defines sc_event_timed::allocate for the
// library (the count stays off in a program that does not link it).
//
// What it tells: the kernel's next timed activity comes closer only through
// a new timed notification (the others are only cancelled or served), so a
// reader of that time that finds the count unchanged since its last read,
// and nothing pending at the present, knows the time has not come closer
// without asking the kernel again (HopQueue::recheck).
#pragma once

#include <cstdint>

namespace vrdmasim::timed_notifications {

inline std::uint64_t g_made = 0;   // sc_event_timed allocated so far
inline bool g_counting = false;   // g_made counts them (event_order's allocate is the kernel's)

inline bool counting() { return g_counting; }
inline std::uint64_t made() { return g_made; }

}   // namespace vrdmasim::timed_notifications
