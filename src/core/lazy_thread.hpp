// LazyThread: an SC_THREAD that costs nothing until it first has work.
//
// SystemC gives every thread a stack of its own (the pages it touches, and
// its SystemC objects; in the vrdmasim executable a slot of the stack arena,
// src/sim/thread_stacks.hpp), made when the simulation starts. Most of a large torus never needs some of its threads:
// the control-packet sender of a node that never receives, the SMMU
// interrupt handler of a node that never faults. A LazyThread's wake-up is a
// WakeEvent, itself made at its first use (a notification, or a waiter
// asking for it): only then does the LazyThread make an SC_METHOD that
// waits for it, and that event's first notification spawns the thread
// (sc_spawn), which runs in the same evaluation phase, as the waiting
// SC_THREAD would have; the method never runs again. A node whose thread
// never wakes has neither the event, nor the method, nor the thread.
//
// The body must look for its work before it first waits (`while
// (queue.empty()) wait(ev);`): the notification that spawned it is spent.
// An SC_THREAD that waited on `wake` from its start is the same, up to the
// order of processes within that one evaluation phase.
//
// The method is named as the thread will be (the thread, its child, is
// "<name>.run"), under the module that made the LazyThread. Until the
// thread is spawned, that module carries an attribute named
// "vrdmasim.lazy_thread.<name>", so that thread_processes_under
// (src/sim/thread_budget.hpp) counts the thread it can become: the budget is the
// worst case, every node's threads spawned.
#pragma once

#include <functional>
#include <string>

#include <systemc>

#include "src/core/lazy_event.hpp"

namespace vrdmasim {

class LazyThread;

// The wake-up event of a LazyThread (or of any waiter: without a thread it
// is a LazyEvent). Notifications are delta or timed, never immediate: the
// method that spawns the thread is armed in the evaluation phase of the
// event's first use, after an immediate notification would have fired.
class WakeEvent {
public:
    WakeEvent() = default;
    WakeEvent(const WakeEvent&) = delete;
    WakeEvent& operator=(const WakeEvent&) = delete;

    // For waiters; makes the event (and the thread's method) on first use.
    const sc_core::sc_event& get() { return ev_.made() ? ev_.get() : make(); }
    void notify(const sc_core::sc_time& t) { (ev_.made() ? ev_.get() : make()).notify(t); }
    // Whether the event exists yet (it was used).
    bool made() const { return ev_.made(); }

private:
    friend class LazyThread;
    sc_core::sc_event& make();

    LazyEvent ev_;
    LazyThread* thread_ = nullptr;
};

class LazyThread {
public:
    // Prefix of the attribute a module carries for each of its lazy
    // threads not spawned yet.
    static constexpr const char* kAttribute = "vrdmasim.lazy_thread.";

    // During elaboration, inside the owning module's constructor. `wake`
    // must outlive the simulation (a member of the owner) and wake no other
    // LazyThread.
    LazyThread(const char* name, WakeEvent& wake, std::function<void()> body);
    LazyThread(const LazyThread&) = delete;
    LazyThread& operator=(const LazyThread&) = delete;

    bool spawned() const { return spawned_; }
    // Whether the method waiting for the wake-up exists (the event was used).
    bool armed() const { return method_made_; }

private:
    friend class WakeEvent;
    // Makes the method that waits for `ev` (WakeEvent::make).
    void arm(const sc_core::sc_event& ev);
    void trigger();

    sc_core::sc_module* owner_;
    std::string name_;
    const sc_core::sc_event* wake_ = nullptr;
    std::function<void()> body_;
    bool method_made_ = false, armed_ = false, spawned_ = false;
    sc_core::sc_attribute<int> attribute_;
};

}   // namespace vrdmasim
