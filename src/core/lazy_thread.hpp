// LazyThread: an SC_THREAD that costs nothing until it first has work.
//
// SystemC gives every thread a stack of its own (two of the host's memory
// mappings and the pages it touches, src/thread_budget.hpp), made when the
// simulation starts. Most of a large torus never needs some of its threads:
// the control-packet sender of a node that never receives, the SMMU
// interrupt handler of a node that never faults. A LazyThread is first an
// SC_METHOD waiting for the thread's wake-up event; that event's first
// notification spawns the thread (sc_spawn), which runs in the same
// evaluation phase, as the waiting SC_THREAD would have, and the method never
// runs again.
//
// The body must look for its work before it first waits (`while
// (queue.empty()) wait(ev);`): the notification that spawned it is spent.
// An SC_THREAD that waited on `wake` from its start is the same, up to the
// order of processes within that one evaluation phase.
//
// The method is named as the thread will be (the thread, its child, is
// "<name>.run") and carries the attribute kAttribute, so that
// thread_processes_under (src/thread_budget.hpp) counts it as the thread
// it can become: the budget is the worst case, every node's threads spawned.
#pragma once

#include <functional>

#include <systemc>

namespace vrdmasim {

class LazyThread {
public:
    static constexpr const char* kAttribute = "vrdmasim.lazy_thread";

    // During elaboration, inside the owning module's constructor. `wake`
    // must outlive the simulation (a member of the owner).
    LazyThread(const char* name, const sc_core::sc_event& wake, std::function<void()> body);
    LazyThread(const LazyThread&) = delete;
    LazyThread& operator=(const LazyThread&) = delete;

    bool spawned() const { return spawned_; }

private:
    void trigger();

    const sc_core::sc_event& wake_;
    std::function<void()> body_;
    bool armed_ = false, spawned_ = false;
    sc_core::sc_attribute<int> attribute_;
};

}  // namespace vrdmasim
