// HopQueue: the kernel's queue of hop events for links served in exact time
// order (README.md, *Exact time order*). A packet's arrival at a link, the
// wire coming free, a credit coming back: each is an event at its own
// simulated time, and events are served by one method process, in the order
// of (time, key, serial), once nothing else is runnable at their time. So
// every event a process posts for a time t (a sender running ahead of the
// kernel posts for its own local time, never before the kernel's) is in the
// queue before any event at t is served, and two events at the same time
// are served in an order the model gives them (their key: the kind of event,
// the link, the VC; then the packet's serial), never in the order in which
// the host happened to run their posters.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

namespace vrdmasim {

class HopQueue;

// What an event is served by: a link or a router (or a test).
class HopHandler {
public:
    virtual ~HopHandler() = default;
    virtual void on_hop_event(HopQueue& q, std::uint64_t key, void* what, std::uint32_t arg) = 0;

protected:
    HopHandler() = default;
    HopHandler(const HopHandler&) = default;
    HopHandler& operator=(const HopHandler&) = default;
};

class HopQueue : public sc_core::sc_module {
public:
    struct Event {
        sc_core::sc_time t;   // absolute
        std::uint64_t key;   // the model's order among events at the same time (lower first)
        std::uint64_t serial;   // then this (a packet's identity: its NI and its count there)
        HopHandler* to;
        void* what;   // the handler's own (a packet)
        std::uint32_t arg;
    };

    explicit HopQueue(sc_core::sc_module_name name);

    // Queues `e` (e.t at or after the kernel's present: std::logic_error
    // otherwise, which would be a packet served before it was sent).
    void post(const Event& e);

    std::size_t size() const { return heap_.size(); }
    // Events served, and times at which serving waited a delta for other
    // processes still runnable at that time.
    std::uint64_t served() const { return served_; }
    std::uint64_t deferrals() const { return deferrals_; }
    std::size_t most_queued() const { return most_; }

private:
    std::vector<Event> heap_;   // a binary heap, earliest (t, key, serial) at the front
    sc_core::sc_event wake_;
    bool armed_ = false;   // wake_ has a notification pending, at armed_at_
    sc_core::sc_time armed_at_;
    std::uint64_t served_ = 0, deferrals_ = 0;
    std::size_t most_ = 0;

    void serve();   // the method process
    void arm(sc_core::sc_time at, sc_core::sc_time now);
    static bool later(const Event& a, const Event& b) {
        if (a.t != b.t) return a.t > b.t;
        if (a.key != b.key) return a.key > b.key;
        return a.serial > b.serial;
    }
};

}   // namespace vrdmasim
